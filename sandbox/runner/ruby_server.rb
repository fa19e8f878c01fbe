# Assay's warm Ruby: the fork server for `ruby main.rb` runs (issue 31), the Ruby twin of the
# warm Python in runner.py (ZYGOTE) and speaking the same protocol to the runner's Zygote class.
# The runner execs it (`ruby -e <this> <fd> <preload>`) at a container's or slot's first Ruby run,
# as root, with nothing open but /dev/null and its channel. It requires the configured libraries
# once (test/unit's machinery by default: sandbox/languages.ts), never runs model code itself,
# and on each "fork" from the runner forks the next run's process, which becomes the runner's
# child (a middle process forks it and exits; the runner is pid 1 or a subreaper) and waits on a
# channel of its own for the run: its limits, directory, environment and three pipes
# (SCM_RIGHTS). It then sets its own session, rlimits, uid, directory, environment, streams and
# random seed, and runs main.rb as `ruby main.rb` would: $0 and __FILE__ "main.rb", ARGV empty,
# DATA after __END__, at_exit handlers, an uncaught exception printed with exit status 1.
#
# Everything here is a local variable of this top-level scope: a file that `load` runs does not
# see them, so a run finds no method or constant of the server's (only what `socket` and the
# preloaded libraries define, as if it had required them: not json, so the runner writes a run
# NUL-separated).
# The address space the interpreter holds before this server loads anything (what a fresh
# `ruby main.rb` holds at the program's first line, give or take the -e source): a run's
# address-space limit is raised by what its process holds beyond that (socket, the preloaded
# libraries, their heap, the fork's own), so the program gets the same room for its own
# allocations as under a fresh ruby (a correct program at a tight limit would fail otherwise).
vm_size = -> { File.read("/proc/self/status")[/^VmSize:\s+(\d+)/, 1].to_i * 1024 }
vm_start = vm_size.call
require "socket"

sock = Socket.for_fd(Integer(ARGV[0]))
preload = (ARGV[1] || "").split(",").reject(&:empty?)
ARGV.clear
skipped = []
preload.each do |lib|
  begin
    require lib
  rescue Exception => e # a library the image lacks (or a misspelt name): named to the host, skipped
    skipped << "#{lib} (#{e.class}: #{e.message.to_s[0, 200]})"
  end
end
# The descriptors the interpreter holds of its own (none today but the standard three; a timer
# thread's pipe on some builds): a run keeps those, as `ruby main.rb` has them, and nothing else.
own_fds = Dir.children("/proc/self/fd").map(&:to_i) - [sock.fileno]
# A full collection before the first fork: each run starts with the preloaded heap compact and
# marked, and its own first collection walks less that is shared copy-on-write.
GC.start(full_mark: true, immediate_sweep: true)
json_str = ->(t) { '"' + t.to_s.scrub("?").gsub(/[\\"\u0000-\u001f]/) { |c| format("\\u%04x", c.ord) } + '"' }
sock.send("ready[" + skipped.first(20).map(&json_str).join(",") + "]", 0)

close_others = lambda do |keep|
  Dir.children("/proc/self/fd").map(&:to_i).each do |fd|
    next if fd <= 2 || keep.include?(fd) || own_fds.include?(fd)
    begin
      IO.for_fd(fd, autoclose: true).close
    rescue StandardError
      # the directory's own descriptor, closed by now
    end
  end
end

# The server's loop: returns only in a pre-forked run's process, with that run's channel.
serve = lambda do
  loop do
    msg = begin
      sock.recv(64)
    rescue StandardError
      exit!(0)
    end
    exit!(0) if msg.nil? || msg.empty?
    mine, theirs = Socket.pair(:UNIX, :SEQPACKET)
    r, w = IO.pipe
    mid = begin
      Process.fork
    rescue StandardError
      false
    end
    if mid.nil? # the middle process: forks the run's and exits, so that it is the runner's child
      r.close
      pid = begin
        Process.fork
      rescue StandardError
        -1
      end
      if pid.nil? # the run's process: the middle one is gone before the runner sends its run
        w.close
        mine.close
        return theirs
      end
      w.write(pid.to_s)
      exit!(0)
    end
    mid = nil if mid == false
    w.close
    theirs.close
    got = mid ? r.read.to_s : ""
    r.close
    Process.waitpid(mid) if mid
    begin
      if got =~ /\A[1-9][0-9]*\z/
        sock.sendmsg(got, 0, nil, Socket::AncillaryData.unix_rights(mine))
      else
        sock.send("-1", 0)
      end
    rescue StandardError
      exit!(0)
    end
    mine.close
  end
end

ch = serve.call
# The pre-forked process: nothing open but its channel until the runner sends its run.
sock.close
close_others.call([ch.fileno])
req = nil
ios = nil
begin
  msg, _addr, _flags, *ctls = ch.recvmsg(1 << 16, 0, nil, scm_rights: true)
  ios = ctls.flat_map { |c| c.unix_rights || [] }
  exit!(0) if msg.nil? || msg.empty? || ios.size != 3
  ch.send("k", 0)
  ch.close
  f = msg.split("\0", -1)
  exit!(0) if f.size < 7
  req = { "script" => f[0], "cwd" => f[1], "cpu_s" => Integer(f[2]), "mem" => Integer(f[3]), "nproc" => Integer(f[4]),
          "uid" => f[5].empty? ? nil : Integer(f[5]), "nice" => !f[6].empty?,
          "env" => f[7..].to_h { |kv| kv.split("=", 2) } }
rescue StandardError
  exit!(0)
end

begin
  Process.setsid
  Process.setpriority(Process::PRIO_PROCESS, 0, 10) if req["nice"]
  STDIN.reopen(ios[0])
  STDOUT.reopen(ios[1])
  STDERR.reopen(ios[2])
  ios.each(&:close)
  # As `ruby main.rb` has them on pipes: stdout buffered, stderr written through.
  STDOUT.sync = false
  STDERR.sync = true
  close_others.call([])
  Process.setrlimit(:CPU, req["cpu_s"], req["cpu_s"] + 1)
  if req["mem"] > 0
    extra = [vm_size.call - vm_start, 0].max # (read in the run's process, just before its limit)
    Process.setrlimit(:AS, req["mem"] + extra, req["mem"] + extra)
  end
  Process.setrlimit(:CORE, 0, 0)
  Process.setrlimit(:NOFILE, 256, 256)
  Process.setrlimit(:FSIZE, 64 << 20, 64 << 20)
  Process.setrlimit(:NPROC, req["nproc"], req["nproc"]) if req["nproc"] > 0
  if req["uid"]
    Process.groups = []
    Process::GID.change_privilege(req["uid"])
    Process::UID.change_privilege(req["uid"])
  end
  Dir.chdir(req["cwd"])
  ENV.replace(req["env"])
  # A fresh random state, as a fresh interpreter has (Ruby reseeds after fork too: this is sure).
  srand
rescue Exception => e
  begin
    STDERR.syswrite("sandbox: cannot start ruby: #{e.message}\n")
  ensure
    exit!(127)
  end
end

script = req["script"]
$0 = script
ios = req = msg = ctls = f = nil
# DATA, as the interpreter opens it for its main script: the file after its __END__ line.
begin
  src = File.binread(script)
  m = src.match(/^__END__(?:\r?\n|\z)/)
  if m
    data = File.open(script)
    data.seek(m.end(0))
    Object.const_set(:DATA, data)
  end
rescue StandardError
  nil
ensure
  src = nil
end
begin
  load(script)
rescue Exception => e
  # Reported by the interpreter as for `ruby main.rb` (at_exit handlers, the message, status 1,
  # or SystemExit's own status), without this file's frames in the backtrace.
  bt = e.backtrace
  e.set_backtrace(bt.reject { |l| l.start_with?("-e:") }) if bt
  raise e
end
