"""snapconf persistent Python server: run one script many times, one forked child a request.

usage: serve_python.py SCRIPT [WORKER_LIB]

Started once (inside the fuzzer's filesystem view) with the source of an adapter's script
(extract_tarfile.py) as SCRIPT. It imports tarfile once; for every request it forks a
child that runs SCRIPT exactly as `python3 -I -S -c SCRIPT ARGS...` would (sys.argv is
["-c", ARGS...], __name__ is "__main__", an uncaught exception prints its traceback and
exits 1), so a request and a one-shot run of the adapter do the same thing. What the
server does once before forking (`warm`) changes what a child costs, not what it does:
modules a child would import anyway, source lines its traceback would read anyway, and
inherited objects frozen out of the garbage collector (the child collects its own).

Protocol, one line each way:
    request  (stdin):  ARG ARG ...       each argument hex-encoded (any bytes round-trip)
    response (stdout): exit N | signal N [cov=IDS]
With SNAPCONF_COVERAGE=1 in its environment and WORKER_LIB (the source of
snapconf_worker.py) given, the server records which lines of tarfile each child ran
(snapconf_worker.Coverage: sys.monitoring on 3.12+, sys.settrace before) and adds them to
the response as `cov=` and 8 hex digits per line; the child sends them up a pipe as it
ends. A child that dies before sending them gets a response without `cov=`.
The child's stdout and stderr go to the server's stderr (the caller's capture file); its
stdin is closed. The child leads a process group of its own, which is killed with SIGKILL
once it has ended, so nothing it started outlives the request. The server ends at the end
of its stdin.
"""

import ast  # noqa: F401  what a traceback's error locations import (3.11+)
import bz2  # noqa: F401  what tarfile.open("r") tries before plain tar
import gc
import gzip  # noqa: F401
import linecache
import lzma  # noqa: F401
import os
import signal
import sys
import tarfile
import traceback
import types

# At most this many bytes of coverage ids a child sends: less than a pipe's buffer, so
# that it never blocks (tarfile.py has fewer than 4,000 lines: 32,000 bytes).
MAX_COVERAGE = 60000


def child(code, args, tracer, cov_fd):
    gc.enable()
    os.setpgid(0, 0)
    os.close(0)
    os.dup2(2, 1)
    sys.argv = ["-c"] + args
    status = 0
    if tracer is not None:
        tracer.start()
    try:
        exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
    except SystemExit as e:
        if e.code is None:
            status = 0
        elif isinstance(e.code, int):
            status = e.code
        else:
            print(e.code, file=sys.stderr)
            status = 1
    except BaseException as e:  # what the interpreter does with an uncaught exception
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        status = 1
    try:
        if tracer is not None:
            os.write(cov_fd, tracer.stop().encode()[:MAX_COVERAGE])
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status & 0xFF)


def coverage_tracer():
    """The line recorder of tarfile when coverage is asked for (see the module docs)."""
    if os.environ.get("SNAPCONF_COVERAGE") != "1" or len(sys.argv) < 3:
        return None
    lib = types.ModuleType("snapconf_worker")
    exec(compile(sys.argv[2], "snapconf_worker.py", "exec"), lib.__dict__)
    return lib.Coverage([tarfile])


def read_coverage(fd):
    """What a child sent up its coverage pipe (it has ended), as `cov=...`, or `None`."""
    os.set_blocking(fd, False)
    data = b""
    try:
        while len(data) <= MAX_COVERAGE:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
    except BlockingIOError:
        pass
    finally:
        os.close(fd)
    return "cov=" + data.decode("ascii", "replace") if data else None


def warm():
    """Do once, before any fork, what every child would otherwise repeat: the imports
    above (tarfile.open tries gzip, bz2 and xz before plain tar; a traceback imports ast),
    the source lines a traceback from tarfile prints, and a garbage collector that would
    touch, and so copy, every object the child inherited."""
    linecache.getlines(tarfile.__file__)
    gc.disable()
    gc.freeze()


def main():
    code = compile(sys.argv[1], "<string>", "exec")
    tracer = coverage_tracer()
    warm()
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        args = [os.fsdecode(bytes.fromhex(a.decode())) for a in line.split()]
        sys.stderr.flush()
        cov_r, cov_w = os.pipe() if tracer is not None else (None, None)
        pid = os.fork()
        if pid == 0:
            if cov_r is not None:
                os.close(cov_r)
            child(code, args, tracer, cov_w)
        if cov_w is not None:
            os.close(cov_w)
        # Kill the child's group while the child is an unreaped zombie (its pid, and so its
        # group id, cannot be reused yet), then reap it.
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            reply = "signal %d\n" % os.WTERMSIG(status)
        else:
            reply = "exit %d\n" % os.WEXITSTATUS(status)
        cov = read_coverage(cov_r) if cov_r is not None else None
        if cov is not None:
            reply = reply[:-1] + " " + cov + "\n"
        out.write(reply.encode())
        out.flush()


if __name__ == "__main__":
    main()
