"""A real SMTP server for the email channel's tests (Debian's python3-aiosmtpd).

Usage: smtp-server.py PORT MODE [--cert C --key K] [--login USER:PASSWORD] [--replies "451 4.3.0 busy|..."]

MODE is starttls (STARTTLS offered and required before MAIL), tls (TLS from the first byte) or
none. With --login, AUTH is required (after TLS). --replies gives the answers to the first DATA
commands in order (then 250). Prints "ready" once it listens, then one JSON line per mail it
took: {"from", "to", "data"}. Ends on SIGTERM or when stdin closes.
"""
import argparse
import json
import ssl
import sys
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Recorder:
    def __init__(self, replies):
        self.replies = list(replies)

    async def handle_DATA(self, server, session, envelope):
        if self.replies:
            return self.replies.pop(0)
        print(json.dumps({
            "from": envelope.mail_from,
            "to": envelope.rcpt_tos,
            "data": envelope.content.decode("utf8", "replace"),
        }), flush=True)
        return "250 2.0.0 OK queued"


def authenticator_for(login):
    user, password = login.split(":", 1)

    def authenticate(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and \
            auth_data.login.decode() == user and auth_data.password.decode() == password
        return AuthResult(success=ok, handled=False)

    return authenticate


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("mode", choices=["starttls", "tls", "none"])
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--login")
    parser.add_argument("--replies", default="")
    args = parser.parse_args()

    context = None
    if args.mode != "none":
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.cert, args.key)
    kwargs = {}
    if args.mode == "starttls":
        kwargs.update(tls_context=context, require_starttls=True)
    if args.login:
        # With TLS from the first byte aiosmtpd does not know the session is encrypted: only
        # STARTTLS counts for auth_require_tls.
        kwargs.update(authenticator=authenticator_for(args.login), auth_required=True,
                      auth_require_tls=args.mode == "starttls")
    replies = [r for r in args.replies.split("|") if r]
    controller = Controller(Recorder(replies), hostname="127.0.0.1", port=args.port,
                            ssl_context=context if args.mode == "tls" else None,
                            server_hostname="127.0.0.1", **kwargs)
    controller.start()
    print("ready", flush=True)
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    controller.stop()


if __name__ == "__main__":
    main()
