<?php
// Assay's warm PHP: the fork server for `php -d ... main.php` runs (issue 31), the PHP twin of
// ruby_server.rb, speaking the same protocol to runner.py's Zygote class. The runner execs it
// (`php -r <this> <fd>`) at a container's or slot's first PHP run, as root, with nothing open
// but /dev/null and its channel; it never runs model code. On each "fork" it forks the next
// run's process (through a middle process, so the run is the runner's child), which waits for
// its run: the `-d` settings, limits, directory, environment and three pipes (SCM_RIGHTS); it
// puts the pipes on descriptors 0-2 (dup2 through FFI: PHP has none), sets its session, rlimits,
// uid, directory, environment, `$_SERVER`, `$argv` and settings, reseeds, and includes main.php
// at global scope, where no variable or function of the server's is left.
$__assay = (function () {
    $vm = function () {
        return preg_match('/^VmSize:\s+(\d+)/m', (string) @file_get_contents('/proc/self/status'), $m) ? (int) $m[1] * 1024 : 0;
    };
    $vmStart = $vm();
    $ffi = FFI::cdef('int dup2(int, int); int close(int); int setgroups(size_t, const void *);');
    // Open descriptors (not the listing's own, closed by the time it is read back).
    $fds = function () {
        $out = [];
        foreach (scandir('/proc/self/fd') ?: [] as $f) {
            if (ctype_digit($f) && @readlink("/proc/self/fd/$f") !== false) $out[] = (int) $f;
        }
        return $out;
    };
    // The channel (php://fd/ opens a duplicate of it; the original is closed).
    $fdNo = (int) $GLOBALS['argv'][1];
    $stream = fopen("php://fd/$fdNo", 'r+');
    $sock = socket_import_stream($stream);
    $ffi->close($fdNo);
    // A run keeps the standard three descriptors (the pipes put there), nothing else.
    $own = [0, 1, 2];
    socket_send($sock, 'ready[]', 7, 0);

    // The server's loop: returns only in a pre-forked run's process, with that run's channel.
    while (true) {
        $buf = '';
        if (!@socket_recv($sock, $buf, 64, 0)) exit(0);
        $pair = [];
        $pipe = [];
        if (!socket_create_pair(AF_UNIX, SOCK_SEQPACKET, 0, $pair) || !socket_create_pair(AF_UNIX, SOCK_STREAM, 0, $pipe)) exit(0);
        [$mine, $theirs] = $pair;
        $mid = pcntl_fork();
        if ($mid === 0) { // the middle process: forks the run's and exits, so that it is the runner's child
            socket_close($pipe[0]);
            $pid = pcntl_fork();
            if ($pid === 0) {
                socket_close($pipe[1]);
                socket_close($mine);
                socket_close($sock);
                if (is_resource($stream)) fclose($stream);
                $channel = $theirs;
                break;
            }
            socket_write($pipe[1], (string) $pid);
            posix_kill(posix_getpid(), SIGKILL); // no shutdown functions, nothing flushed
        }
        socket_close($pipe[1]);
        socket_close($theirs);
        $got = '';
        if ($mid > 0) {
            while (($b = @socket_read($pipe[0], 32)) !== false && $b !== '') $got .= $b;
            pcntl_waitpid($mid, $status);
        }
        socket_close($pipe[0]);
        if (preg_match('/^[1-9][0-9]*$/', $got)) {
            // (as a stream: PHP 8.2 sends a Socket object's descriptor wrong, /dev/null's here)
            $ok = @socket_sendmsg($sock, ['iov' => [$got], 'control' => [['level' => SOL_SOCKET, 'type' => SCM_RIGHTS, 'data' => [socket_export_stream($mine)]]]], 0);
        } else {
            $ok = @socket_send($sock, '-1', 2, 0);
        }
        socket_close($mine);
        if ($ok === false) exit(0);
    }

    // The pre-forked process: nothing open but its channel (and 0-2) until the runner sends its run.
    $before = $fds();
    $msg = ['name' => [], 'buffer_size' => 1 << 16, 'controllen' => socket_cmsg_space(SOL_SOCKET, SCM_RIGHTS, 3)];
    if (@socket_recvmsg($channel, $msg, 0) === false) exit(0);
    $received = $msg['control'][0]['data'] ?? [];
    $new = array_values(array_diff($fds(), $before));
    sort($new);
    $text = $msg['iov'][0] ?? '';
    if (count($new) !== 3 || $text === '') exit(0);
    @socket_send($channel, 'k', 1, 0);
    socket_close($channel);
    $f = explode("\0", $text);
    // script, cwd, cpu_s, mem, nproc, uid, nice, settings (k=v, \x01-separated), then KEY=VALUE
    try {
        posix_setsid();
        // Absolute (proc_nice adds to it): the fork server is at 10 already (runner.py's Zygote.start).
        if ($f[6] !== '') pcntl_setpriority(10);
        foreach ($new as $i => $fd) $ffi->dup2($fd, $i);
        foreach ($received as $r) {
            if (is_resource($r)) fclose($r);
            elseif ($r instanceof Socket) socket_close($r);
        }
        foreach ($fds() as $fd) {
            if ($fd > 2 && !in_array($fd, $own, true)) $ffi->close($fd);
        }
        $cpu = (int) $f[2];
        posix_setrlimit(POSIX_RLIMIT_CPU, $cpu, $cpu + 1);
        if ((int) $f[3] > 0) {
            $as = (int) $f[3] + max(0, $vm() - $vmStart);
            posix_setrlimit(POSIX_RLIMIT_AS, $as, $as);
        }
        posix_setrlimit(POSIX_RLIMIT_CORE, 0, 0);
        posix_setrlimit(POSIX_RLIMIT_NOFILE, 256, 256);
        posix_setrlimit(POSIX_RLIMIT_FSIZE, 64 << 20, 64 << 20);
        if ((int) $f[4] > 0) posix_setrlimit(POSIX_RLIMIT_NPROC, (int) $f[4], (int) $f[4]);
        if ($f[5] !== '') {
            if ($ffi->setgroups(0, null) !== 0 || !posix_setgid((int) $f[5]) || !posix_setuid((int) $f[5])) throw new Exception('cannot drop to uid ' . $f[5]);
        }
        if (!chdir($f[1])) throw new Exception('cannot enter ' . $f[1]);
        foreach ($f[7] === '' ? [] : explode("\x01", $f[7]) as $kv) {
            [$k, $v] = explode('=', $kv, 2) + [1 => ''];
            ini_set($k, $v);
        }
        $env = [];
        foreach (array_slice($f, 8) as $kv) {
            [$k, $v] = explode('=', $kv, 2) + [1 => ''];
            $env[$k] = $v;
        }
        foreach (array_keys(getenv()) as $k) {
            if (!array_key_exists($k, $env)) putenv($k);
        }
        foreach ($env as $k => $v) putenv("$k=$v");
        $script = $f[0];
        $now = microtime(true);
        $_SERVER = $env + ['PHP_SELF' => $script, 'SCRIPT_NAME' => $script, 'SCRIPT_FILENAME' => $script, 'PATH_TRANSLATED' => $script,
            'DOCUMENT_ROOT' => '', 'REQUEST_TIME_FLOAT' => $now, 'REQUEST_TIME' => (int) $now, 'argv' => [$script], 'argc' => 1];
        mt_srand();
    } catch (Throwable $e) {
        fwrite(STDERR, 'sandbox: cannot start php: ' . $e->getMessage() . "\n");
        posix_kill(posix_getpid(), SIGKILL);
    }
    return $script;
})();
$argv = [$__assay];
$argc = 1;
unset($__assay);
include $argv[0];
