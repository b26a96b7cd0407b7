"""Running one peer in a fresh process with a timeout, as the peer scripts
share (xtask/peers/remesh_peers.py, tet_peers.py)."""

import multiprocessing
import os


def _worker(conn, run, args):
    """Child process: run(*args), sending back its result or error."""
    os.dup2(2, 1)  # whatever the peer prints goes to stderr, not our stdout
    try:
        conn.send(run(*args))
    except Exception as e:  # ImportError (not installed) or a failed run
        conn.send(f"{type(e).__name__}: {e}")


def run_isolated(run, args, timeout):
    """run(*args) in a fresh interpreter (multiprocessing's spawn), its
    result sent back through a pipe; or a string saying why not: its
    exception, the timeout (seconds) exceeded, or the process dying. `run`
    must be a module-level function (the child imports it by name)."""
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_worker, args=(child, run, args))
    proc.start()
    child.close()  # so that a crashed child reads as EOF here
    try:
        if not parent.poll(timeout):
            return f"exceeded the timeout of {timeout:g} s"
        return parent.recv()
    except EOFError:
        proc.join()
        return f"the process died without a result (exit code {proc.exitcode})"
    finally:
        proc.kill()
        proc.join()
