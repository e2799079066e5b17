"""The tutor tile in JupyterLab's launcher, on any JupyterHub or JupyterLab where tutor is installed with its
`jupyter` extra: jupyter-server-proxy reads `server()` through the `jupyter_serverproxy_servers` entry point.

The tile opens /user/NAME/tutor/ in a new browser tab. jupyter-server-proxy starts `tutor serve --socket` there as
the learner (in their own single-user server, so the progress file is theirs), on a unix socket in a fresh folder
of mode 700 that it makes, and proxies the tab to it after Jupyter's own login: no token of ours. A unix socket,
not a port: on a hub where learners share a machine any of them can open 127.0.0.1:PORT, and the tutor behind it
takes no token; a socket in a 700 folder opens for its owner (and root) alone.

Nothing here imports Jupyter: the entry point is read by jupyter-server-proxy, in Jupyter's process.
"""

from __future__ import annotations

import sys
from pathlib import Path

NAME = "tutor"  # the URL's last part (/user/NAME/tutor/) and the tile's title
ICON = Path(__file__).resolve().parent / "tutor.svg"
START_SECONDS = 30.0  # for `tutor serve` to answer; the proxy's default, 5 s, is short on a busy shared hub
NOTICE_STATUS = 503


def format_literal(text: str) -> str:
    """`text` as it must stand in the proxy's command, which it fills in with str.format: braces doubled, so a
    Python at /opt/{course}/bin/python stays that path."""
    return text.replace("{", "{{").replace("}", "}}")


def server() -> dict[str, object]:
    """What jupyter-server-proxy runs and shows, as its ServerProcess options."""
    return {
        # -P: the working folder is the learner's home, where a `tutor/` of theirs must not be what runs
        "command": [format_literal(sys.executable), "-P", "-m", "tutor", "serve", "--socket", "{unix_socket}"],
        "unix_socket": True,  # a socket in a new folder of mode 700 (tempfile.mkdtemp), made by the proxy
        "timeout": START_SECONDS,
        "absolute_url": False,  # the proxy strips /user/NAME/tutor/: the server answers `/`, its page is relative
        "new_browser_tab": True,  # the page may not be framed (frame-ancestors 'none'), and wants the whole tab
        "launcher_entry": {"title": NAME, "icon_path": str(ICON)},
    }


def notice_page(message: str) -> bytes:
    """A page that says `message` and nothing else."""
    import html

    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>tutor</title></head>'
        '<body style="background:#0c181f;color:#eee;font:16px monospace;padding:2em">'
        f"<p>{html.escape(message)}</p></body></html>"
    ).encode()


def serve_notice(socket_path: str, message: str) -> int:
    """Answer every request on `socket_path` with `message` (status 503) until SIGTERM or SIGINT: behind Jupyter
    the learner sees the tab, not this process's stderr, and a command that exits is started again and again by
    the proxy until its timeout, then shown as "could not start". Standard library only: the web extra is what
    is missing. Exit code 2, as the command's other usage errors."""
    import contextlib
    import http.server
    import os
    import signal
    import socketserver
    import threading

    page = notice_page(message)

    class Notice(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(NOTICE_STATUS)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def address_string(self) -> str:  # a unix socket's peer has no host to name
            return "unix"

        def log_message(self, format: str, *args: object) -> None:
            """No access log: the one line is already on stderr."""

    class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
        daemon_threads = True

    with contextlib.suppress(FileNotFoundError):  # a socket left by an earlier start, as asyncio would
        if Path(socket_path).is_socket():
            os.unlink(socket_path)
    try:
        notice = Server(socket_path, Notice)
    except OSError as error:
        print(f"tutor: error: cannot listen on {socket_path}: {error.strerror or error}", file=sys.stderr)
        return 2
    os.chmod(socket_path, 0o600)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda *_: stop.set())
    worker = threading.Thread(target=notice.serve_forever, daemon=True)
    worker.start()
    stop.wait()
    notice.shutdown()
    notice.server_close()
    with contextlib.suppress(OSError):
        os.unlink(socket_path)
    return 2
