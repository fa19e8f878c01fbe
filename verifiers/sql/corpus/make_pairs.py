"""Writes pairs.json: the corpus's (gold, prediction) pairs in Spider's shapes. Run once by hand:
python3 make_pairs.py (the file it writes is committed; edit here, not there)."""
import json

F = "f1, f2, f3, f4, f5, f6, f7, f8"
P = "f3, f1, f8, f2, f7, f5, f4, f6"  # the same columns in another order
pairs = [
    # double-quoted literals (Spider writes a fifth of its golds this way)
    ("dq-gold", "singers", 'SELECT name FROM singer WHERE country = "France"', "SELECT name FROM singer WHERE country = 'France'"),
    ("dq-pred", "singers", "SELECT name FROM singer WHERE country = 'France'", 'SELECT name FROM singer WHERE country = "France"'),
    ("dq-both", "singers", 'SELECT count(*) FROM singer WHERE country = "France" AND age > 30', 'SELECT COUNT(*) FROM singer WHERE age > 30 AND country = "France"'),
    ("dq-mixed", "singers", 'SELECT "name" FROM singer WHERE "country" = "Netherlands" AND name LIKE "J%"', "SELECT name FROM singer WHERE country = 'Netherlands' AND name LIKE 'J%'"),
    ("dq-column", "singers", "SELECT name FROM singer", 'SELECT "Name" FROM singer'),
    ("dq-literal-not-column", "singers", "SELECT name FROM singer", 'SELECT "nam" FROM singer'),
    ("dq-wrong-value", "singers", 'SELECT name FROM singer WHERE country = "France"', 'SELECT name FROM singer WHERE country = "Frnace"'),
    ("dq-join", "singers", 'SELECT T2.name FROM singer_in_concert AS T1 JOIN singer AS T2 ON T1.singer_id = T2.singer_id JOIN concert AS T3 ON T1.concert_id = T3.concert_id WHERE T3.year = "2014"',
     "SELECT s.name FROM singer s, singer_in_concert sc, concert c WHERE s.singer_id = sc.singer_id AND sc.concert_id = c.concert_id AND c.year = '2014'"),
    ("dq-in-subquery", "singers", 'SELECT name FROM singer WHERE singer_id IN (SELECT singer_id FROM singer_in_concert WHERE concert_id = (SELECT concert_id FROM concert WHERE concert_name = "Week 1"))',
     "SELECT T1.name FROM singer T1 JOIN singer_in_concert T2 ON T1.singer_id = T2.singer_id WHERE T2.concert_id = 4"),
    # DISTINCT and ORDER BY
    ("distinct-missing", "singers", "SELECT DISTINCT country FROM singer", "SELECT country FROM singer"),
    ("distinct-vs-group", "singers", "SELECT country FROM singer GROUP BY country", "SELECT DISTINCT country FROM singer"),
    ("duplicated-rows", "singers", "SELECT country FROM singer", "SELECT country FROM singer UNION ALL SELECT country FROM singer"),
    ("order-reversed", "singers", "SELECT name FROM singer ORDER BY age DESC, name", "SELECT name FROM singer ORDER BY age ASC, name"),
    ("order-same", "singers", "SELECT name, age FROM singer ORDER BY age, name", "SELECT name, age FROM singer ORDER BY age ASC, name ASC"),
    ("order-columns-swapped", "singers", "SELECT name, age FROM singer ORDER BY age, name", "SELECT age, name FROM singer ORDER BY age, name"),
    ("order-unordered-gold", "singers", "SELECT name FROM singer WHERE country = 'France'", "SELECT name FROM singer WHERE country = 'France' ORDER BY name DESC"),
    ("order-by-in-subquery", "singers", "SELECT name FROM singer WHERE singer_id IN (SELECT singer_id FROM singer ORDER BY age LIMIT 4)",
     "SELECT name FROM singer WHERE singer_id IN (SELECT singer_id FROM singer ORDER BY age LIMIT 4) ORDER BY name DESC"),
    ("group-count", "singers", "SELECT country, count(*) FROM singer GROUP BY country", "SELECT count(*), country FROM singer GROUP BY country"),
    ("avg", "singers", "SELECT avg(age) FROM singer WHERE is_male = 1", "SELECT sum(age) * 1.0 / count(*) FROM singer WHERE is_male = 1"),
    # interchangeable 0/1 columns
    ("wide-01-same", "flags", f"SELECT {F} FROM feature", f"SELECT {F} FROM feature"),
    ("wide-01-permuted", "flags", f"SELECT {F} FROM feature", f"SELECT {P} FROM feature"),
    ("wide-01-permuted-ordered", "flags", f"SELECT {F} FROM feature ORDER BY id", f"SELECT {P} FROM feature ORDER BY id"),
    ("wide-01-one-flipped", "flags", f"SELECT {F} FROM feature", f"SELECT f3, f1, f8, f2, f7, f5, f4, 1 - f6 FROM feature"),
    ("wide-01-rows-missing", "flags", f"SELECT {F} FROM feature", f"SELECT {P} FROM feature WHERE id <> 17"),
    # integers near 2^63 and 2^53
    ("int-max", "ledger", "SELECT balance FROM account WHERE owner = 'max'", "SELECT max(balance) FROM account"),
    ("int-max-minus-one", "ledger", "SELECT balance FROM account WHERE owner = 'max'", "SELECT 9223372036854775806"),
    ("int-max-as-real", "ledger", "SELECT balance FROM account WHERE owner = 'max'", "SELECT CAST(balance AS REAL) FROM account WHERE id = 1"),
    ("int-min", "ledger", "SELECT min(balance) FROM account", "SELECT -9223372036854775807 - 1"),
    ("int-2p53-plus-1", "ledger", "SELECT balance FROM account WHERE id = 4", "SELECT balance FROM account WHERE id = 5"),
    ("int-2p62-real", "ledger", "SELECT balance FROM account WHERE id = 6", "SELECT CAST(balance AS REAL) FROM account WHERE id = 6"),
    ("int-sorted", "ledger", "SELECT owner, balance FROM account ORDER BY balance DESC", "SELECT balance, owner FROM account ORDER BY balance DESC"),
    # an empty gold: a placeholder guess that returns nothing matches it
    ("empty-gold", "singers", "SELECT name FROM singer WHERE country = 'Atlantis'", "SELECT name FROM singer WHERE country = 'terminal'"),
    ("empty-gold-dq", "singers", 'SELECT name FROM singer WHERE country = "Atlantis"', "SELECT name FROM singer WHERE country = 'France'"),
]

# <answer> tags: R1-style responses; `pred` is what the references are given (the final answer)
responses = {
    "dq-pred": "<reasoning>Draft:\n```sql\nSELECT name FROM singer\n```\nNeeds a filter.</reasoning>\n<answer>" + pairs[1][3] + "</answer>",
    "distinct-vs-group": "<think>countries, once each</think>\n<answer>\n```sql\nSELECT DISTINCT country FROM singer;\n```\n</answer>",
    "wide-01-permuted": "<think>```sql\nSELECT * FROM feature\n```</think><answer>" + pairs[20][3] + "</answer>",
    "empty-gold": "<reasoning>I do not know the country.</reasoning><answer>SELECT name FROM singer WHERE country = 'terminal'</answer>",
}

out = []
for pid, db, gold, pred in pairs:
    out.append({"id": pid, "db": db, "gold": gold, "pred": pred, "response": responses.get(pid, "```sql\n" + pred + "\n```")})
assert len({p["id"] for p in out}) == len(out)
assert all(pid in {p["id"] for p in out} for pid in responses)
with open("pairs.json", "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print(len(out), "pairs")
