"""Client for the Assay reward server (standard library only), with adapters for TRL, verl and
OpenRLHF in `assay_client.trl`, `assay_client.verl`, `assay_client.openrlhf`, and a GRPO
trainer in `assay_client.train` (the `assay-train` command)."""
from .client import AssayClient, AssayError, AsyncAssayClient, RetryPolicy

__all__ = ["AssayClient", "AsyncAssayClient", "AssayError", "RetryPolicy"]
__version__ = "0.1.0"
