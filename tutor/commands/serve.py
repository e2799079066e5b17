"""`tutor serve`: the same app in a browser tab (textual-serve, the optional `web` extra).

Each browser tab runs its own `python -P -m tutor` (with the learner's --lang and --model), as the learner, on
their progress file, in a private folder: not where the server was started, where another user may have written
a `tutor/` package for Python to import first. The URL carries a random token and path: on a shared machine every
user can reach 127.0.0.1. The server itself, its checks and its limits, is in tutor/patches/web_server.py.

`--socket PATH` is the same server behind jupyter-server-proxy (tutor/jupyter.py, the launcher's tile): on a unix
socket in a folder only the learner can open, with no token, since Jupyter has logged the learner in.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import TYPE_CHECKING

from tutor.commands.common import fail
from tutor.i18n import pick

# asyncio and the rest are imported where they are used: every `tutor` start builds this module's parser

if TYPE_CHECKING:
    from tutor.patches.web_server import TutorServer

HELP = "serve the tutor to a browser tab (needs the web extra); the URL it prints carries a token"
DESCRIPTION = (
    "Serve the same tutor to a web browser: every tab runs its own tutor, on your progress. Binds 127.0.0.1 by "
    "default; the printed URL carries a random token, and a request without it is refused (403)."
)
DEFAULT_MAX_SESSIONS = 8  # tabs open at once, a tutor process each; a learner needs one or two
DEFAULT_PORT = 8000
DEFAULT_HOST = "127.0.0.1"
WEB_EXTRA = {"textual_serve", "aiohttp", "aiohttp_jinja2", "jinja2"}  # what `pip install ".[web]"` brings
TOKEN_BYTES = 24  # as Jupyter's: 192 random bits

WORDS: dict[str, tuple[str, str]] = {  # key: (en, zh)
    "no_extra": (
        'tutor serve needs the web extra: in the folder tutor came from, pip install ".[web]" '
        '(not "tutor[web]": on PyPI "tutor" is another project, Open edX\'s)',
        'tutor serve 需要 web 扩展：在 tutor 的源码目录里运行 pip install ".[web]"'
        '（不要装 "tutor[web]"：PyPI 上的 "tutor" 是另一个项目，Open edX 的）',
    ),
    "url": (
        "Open in a browser (the token in it is your key; Ctrl+C stops): {url}",
        "在浏览器中打开（其中的 token 就是钥匙；Ctrl+C 停止）：{url}",
    ),
    "network": (
        "--host {host}: the page is reachable from the network; only the token keeps others out",
        "--host {host}：网络上的其他机器也能访问此页面，只有 token 能挡住别人",
    ),
    "in_use": (
        "port {port} is already in use (another tutor serve?): try --port {next}",
        "端口 {port} 已被占用（另一个 tutor serve？）：试试 --port {next}",
    ),
    "cannot_listen": ("cannot listen on {host}:{port}: {reason}", "无法在 {host}:{port} 上监听：{reason}"),
    "no_extra_jupyter": (
        "the tutor tile needs textual-serve, which this Jupyter's Python lacks: ask whoever runs this hub to "
        'install tutor with its jupyter extra (pip install "tutor-VERSION-py3-none-any.whl[jupyter]")',
        "tutor 图标需要 textual-serve，而这个 Jupyter 的 Python 里没有：请管理此 hub 的人安装带 jupyter 扩展的 "
        'tutor（pip install "tutor-版本-py3-none-any.whl[jupyter]"）',
    ),
    "socket_alone": (
        "--socket takes the place of --host and --port: give one or the other",
        "--socket 取代 --host 和 --port：二者只能选一",
    ),
    "socket_folder": (
        "--socket {path}: its folder must be yours alone (mode 700), or other users could open your tutor: {why}",
        "--socket {path}：所在目录必须只属于你（权限 700），否则别的用户能打开你的 tutor：{why}",
    ),
    "not_folder": ("{folder} is not a folder", "{folder} 不是目录"),
    "not_yours": ("{folder} is not yours", "{folder} 不属于你"),
    "folder_mode": ("{folder} has mode {mode}", "{folder} 的权限是 {mode}"),
    "socket_taken": (
        "cannot listen on {path}: a file that is not a socket is already there",
        "无法在 {path} 上监听：那里已有一个不是套接字的文件",
    ),
    "cannot_listen_socket": ("cannot listen on {path}: {reason}", "无法在 {path} 上监听：{reason}"),
    "on_socket": (
        "tutor serve: serving on {path}, behind Jupyter's login (no token)",
        "tutor serve：在 {path} 上提供服务，由 Jupyter 的登录把关（不用 token）",
    ),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free)")
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"address to listen on (default {DEFAULT_HOST}, this machine only; 0.0.0.0: the network too)",
    )
    parser.add_argument(
        "--max-sessions",
        type=positive,
        default=DEFAULT_MAX_SESSIONS,
        metavar="N",
        help=f"browser tabs open at once, a tutor each (default {DEFAULT_MAX_SESSIONS})",
    )
    parser.add_argument(
        "--socket",
        metavar="PATH",
        help="listen on a unix socket at PATH instead of a port, with no token, for a proxy that logs users in "
        "(jupyter-server-proxy: the JupyterLab launcher's tutor tile runs this); PATH's folder must be yours alone",
    )
    parser.add_argument(
        "--no-fork-server",
        action="store_true",
        help="start each tab's tutor as a process of its own (about 1.5 times the memory a tab) instead of forking "
        "it from one process that has loaded the tutor once",
    )


def positive(text: str) -> int:
    """argparse's type for a count of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a whole number of at least 1: {text!r}")
    return value


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach `host`."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def session_command(args: argparse.Namespace, folder: str) -> str:
    """What each browser tab runs (textual-serve hands it to a shell): this Python's tutor, same language and
    model, in `folder`, with -P: Python puts no working folder on sys.path for `-m`, so a `tutor/` written where
    the server started is not what runs. No token in it: every user on the machine can read a command line."""
    words = [sys.executable, "-P", "-m", "tutor", *session_arguments(args)]
    return f"cd {shlex.quote(folder)} && exec {shlex.join(words)}"  # the shell becomes the tutor: one process a tab


def session_arguments(args: argparse.Namespace) -> list[str]:
    """`tutor`'s arguments in each tab, spawned or forked: the same language, model and lessons."""
    words = ["--lang", args.lang]
    if args.model:
        words += ["--model", model_argument(args.model)]
    if getattr(args, "lessons", None):  # a teacher's folder, as the tabs must see it from their own folder
        from pathlib import Path

        words += ["--lessons", str(Path(args.lessons).expanduser().absolute())]
    return words


def model_argument(model: str) -> str:
    """--model as the tabs must see it from their own folder: a path that is one here, made absolute."""
    import os
    from pathlib import Path

    path = Path(model).expanduser()
    return str(path.absolute()) if os.sep in model or path.exists() else model


def shown_host(host: str, port: int) -> str:
    """host:port as the URL shows it: a wildcard host as the machine's name."""
    import socket

    if host in {"", "0.0.0.0", "::"}:
        host = socket.gethostname()
    elif ":" in host:
        host = f"[{host}]"
    return f"{host}:{port}"


def url(host: str, port: int, path: str, token: str) -> str:
    """The address to open: the server's own path (`/…/`), with the token."""
    return f"http://{shown_host(host, port)}{path}?token={token}"


def folder_problem(socket_path: str, lang: str = "en") -> str | None:
    """Why the socket's folder would let another user in (None: it is this user's alone). A unix socket is
    opened by whoever may search its folder and write to it: with no token, the folder is the lock."""
    import os
    import stat
    from pathlib import Path

    folder = Path(socket_path).absolute().parent
    try:
        info = folder.stat()
    except OSError as error:
        return f"{folder}: {error.strerror or error}"
    if not stat.S_ISDIR(info.st_mode):
        return pick(WORDS, "not_folder", lang, folder=folder)
    if info.st_uid != os.getuid():
        return pick(WORDS, "not_yours", lang, folder=folder)
    if info.st_mode & 0o077:
        return pick(WORDS, "folder_mode", lang, folder=folder, mode=f"{stat.S_IMODE(info.st_mode):o}")
    return None


async def serve(server: TutorServer, lang: str) -> int:
    """Listen, print the URL, and serve until SIGINT, SIGTERM or SIGHUP; then close every session (each tutor
    is told to quit, which saves its progress)."""
    import asyncio
    import contextlib
    import errno
    import os
    import signal

    if server.forks is not None:
        server.forks.watch()
    socket_path = getattr(server, "socket_path", None)
    try:
        runner = await server.start()
    except OSError as error:
        if socket_path is not None:
            if error.errno == errno.EADDRINUSE:  # asyncio replaces a socket left there, not another file
                return fail(pick(WORDS, "socket_taken", lang, path=socket_path))
            reason = os.strerror(error.errno) if error.errno and error.errno > 0 else (error.strerror or str(error))
            return fail(pick(WORDS, "cannot_listen_socket", lang, path=socket_path, reason=reason))
        if error.errno == errno.EADDRINUSE:
            return fail(pick(WORDS, "in_use", lang, port=server.port, next=server.port + 1))
        # asyncio's message repeats the address; a name that does not resolve has only its own
        reason = os.strerror(error.errno) if error.errno and error.errno > 0 else (error.strerror or str(error))
        return fail(pick(WORDS, "cannot_listen", lang, host=server.host, port=server.port, reason=reason))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, stop.set)
    try:
        if socket_path is not None:  # Jupyter's log shows it; the learner sees the tab
            print(pick(WORDS, "on_socket", lang, path=socket_path), flush=True)
            await stop.wait()
            return 0
        port = runner.addresses[0][1] if server.port == 0 else server.port
        if not is_loopback(server.host):
            print(pick(WORDS, "network", lang, host=server.host), flush=True)
        server.named_hosts = {shown_host(server.host, port).lower()}  # the Host the URL sends, besides loopback
        print(pick(WORDS, "url", lang, url=url(server.host, port, server.index_path, server.token)), flush=True)
        await stop.wait()
    finally:
        await runner.cleanup()
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(signum)
        if socket_path is not None:  # aiohttp leaves the socket file behind
            with contextlib.suppress(OSError):
                os.unlink(socket_path)
    return 0


def run(args: argparse.Namespace) -> int:
    import asyncio
    import contextlib
    import secrets
    import tempfile

    socket_path = getattr(args, "socket", None)
    if socket_path is not None:
        if args.host != DEFAULT_HOST or args.port != DEFAULT_PORT:
            return fail(pick(WORDS, "socket_alone", args.lang), code=2)
        problem = folder_problem(socket_path, args.lang)
        if problem is not None:
            return fail(pick(WORDS, "socket_folder", args.lang, path=socket_path, why=problem), code=2)
    try:
        from tutor.patches.web_server import ProxiedServer, TutorServer
    except ImportError as error:
        if (error.name or "").split(".")[0] not in WEB_EXTRA:
            raise
        if socket_path is None:
            return fail(pick(WORDS, "no_extra", args.lang), code=2)
        # behind Jupyter the learner sees the tab, not this process's stderr: the tab shows the line too
        from tutor.jupyter import serve_notice

        message = pick(WORDS, "no_extra_jupyter", args.lang)
        fail(message)
        return serve_notice(socket_path, message)
    if args.model:  # a mistyped model fails here, not in every browser tab
        import model

        try:
            model.load(args.model)
        except model.WeightsError as error:
            return fail(str(error))
    # the tabs' working folder: 0700, this server's alone, gone when it stops
    with tempfile.TemporaryDirectory(prefix="tutor-serve-") as folder:
        command = session_command(args, folder)
        forks = None
        if not args.no_fork_server:  # now, before the event loop and its threads, and before the token exists
            from tutor.fork_client import ForkServer
            from tutor.patches.web_server import tab_environment

            forks = ForkServer.start(session_arguments(args), folder, tab_environment(), args.model, args.lang)
        server: TutorServer
        if socket_path is not None:
            server = ProxiedServer(command, socket_path, max_sessions=args.max_sessions, forks=forks)
        else:
            server = TutorServer(
                command,
                args.host,
                args.port,
                secrets.token_urlsafe(TOKEN_BYTES),
                max_sessions=args.max_sessions,
                forks=forks,
            )
        try:
            with contextlib.suppress(KeyboardInterrupt):
                return asyncio.run(serve(server, args.lang))
        finally:
            if forks is not None:
                forks.stop()  # after the sessions: the fork server waits for its tutors to save, then ends
    return 0
