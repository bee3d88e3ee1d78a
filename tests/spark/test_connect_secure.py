"""The connector's client authenticates as an ACL user and speaks TLS (`rediss://`)."""

from __future__ import annotations

import pytest

from rillet.spark.client import connect, stream_infos
from rillet.spark.options import ConnectionOptions
from tests.helpers import servers
from tests.helpers.tls import have_openssl, make_certs, server_args


@pytest.mark.skipif(not have_openssl(), reason="openssl not installed")
def test_rediss_url_with_user_and_password(tmp_path):
    certs = make_certs(str(tmp_path))
    tls_port = servers.free_port()
    handle = servers.start_rillet(*server_args(certs, tls_port, "no"))
    try:
        admin = handle.client()
        admin.execute_command("ACL", "SETUSER", "spark", "on", ">sparkpw", "~events*", "+@stream",
                              "+@connection", "+info", "+scan")
        url = (f"rediss://spark:sparkpw@127.0.0.1:{tls_port}/0"
               f"?ssl_cert_reqs=required&ssl_ca_certs={certs.ca}&ssl_check_hostname=false")
        client = connect(ConnectionOptions(url=url))
        client.execute_command("XADD", "events", "1-1", "f", "v")
        info = stream_infos(client, ["events"])["events"]
        assert info is not None and info.length == 1
        with pytest.raises(Exception, match="No permissions to access a key"):
            client.execute_command("XADD", "other", "*", "f", "v")
        client.close()
    finally:
        handle.stop()
