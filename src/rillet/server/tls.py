"""TLS for the `tls-port` listener: an `ssl.SSLContext` from Redis's tls-* parameters.

As Redis's tlsConfigure: a server certificate and key are required, the CA
file/dir verify client certificates (`tls-auth-clients yes` requires one,
`optional` checks one if sent, `no` does not ask), `tls-protocols` lists the
versions allowed ("TLSv1.2 TLSv1.3" when empty), `tls-ciphers` is the TLS 1.2
cipher list. Python's ssl module cannot set TLS 1.3 cipher suites, so
`tls-ciphersuites` is accepted and only checked for being non-empty-safe
(see docs/compat.md).
"""

from __future__ import annotations

import ssl

from rillet.config import Config


class TlsConfigError(ValueError):
    """A TLS setting that keeps the server from starting (Redis logs and exits)."""


_VERSIONS = {
    "tlsv1": ssl.TLSVersion.TLSv1,
    "tlsv1.1": ssl.TLSVersion.TLSv1_1,
    "tlsv1.2": ssl.TLSVersion.TLSv1_2,
    "tlsv1.3": ssl.TLSVersion.TLSv1_3,
}


def server_context(config: Config) -> ssl.SSLContext:
    cert, key = str(config["tls-cert-file"]), str(config["tls-key-file"])
    if not cert:
        raise TlsConfigError("No tls-cert-file configured!")
    if not key:
        raise TlsConfigError("No tls-key-file configured!")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _protocols(context, str(config["tls-protocols"]))
    try:
        context.load_cert_chain(cert, key, password=str(config["tls-key-file-pass"]) or None)
    except (OSError, ssl.SSLError) as error:
        raise TlsConfigError(f"Failed to load certificate: {cert}: {error}") from None
    ca_file, ca_dir = str(config["tls-ca-cert-file"]), str(config["tls-ca-cert-dir"])
    auth = str(config["tls-auth-clients"])
    if auth != "no" and not (ca_file or ca_dir):
        raise TlsConfigError("Either tls-ca-cert-file or tls-ca-cert-dir must be specified "
                             "when tls-auth-clients is enabled!")
    if ca_file or ca_dir:
        try:
            context.load_verify_locations(cafile=ca_file or None, capath=ca_dir or None)
        except (OSError, ssl.SSLError) as error:
            raise TlsConfigError(f"Failed to configure CA certificate(s) file/directory: {error}") from None
    context.verify_mode = {"yes": ssl.CERT_REQUIRED, "optional": ssl.CERT_OPTIONAL,
                           "no": ssl.CERT_NONE}[auth]
    if config["tls-ciphers"]:
        try:
            context.set_ciphers(str(config["tls-ciphers"]))
        except ssl.SSLError:
            raise TlsConfigError(f"Failed to configure ciphers: {config['tls-ciphers']}") from None
    if config["tls-prefer-server-ciphers"]:
        context.options |= ssl.OP_CIPHER_SERVER_PREFERENCE
    if not config["tls-session-caching"]:
        context.options |= ssl.OP_NO_TICKET
    if config["tls-dh-params-file"]:
        try:
            context.load_dh_params(str(config["tls-dh-params-file"]))
        except (OSError, ssl.SSLError) as error:
            raise TlsConfigError(f"Failed to load DH params file: {error}") from None
    return context


def _protocols(context: ssl.SSLContext, text: str) -> None:
    """`tls-protocols`: the allowed versions, as a min..max range (Redis disables the others)."""
    names = text.lower().split() or ["tlsv1.2", "tlsv1.3"]
    versions = []
    for name in names:
        if name not in _VERSIONS:
            raise TlsConfigError("Invalid tls-protocols specified. Use a combination of "
                                 "'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.")
        versions.append(_VERSIONS[name])
    context.minimum_version = min(versions)
    context.maximum_version = max(versions)
