"""Secret redaction: every pattern, no false positives, idempotent, linear time.

Every secret below is fake and assembled at run time (prefix + generated
body), so this file holds nothing a secret scanner would take for a live key.
"""

from __future__ import annotations

import base64
import itertools
import json

import attrs
import pytest
from thatch.redact import KINDS, MARKER_PREFIX, Redaction, marker, redact

MIXED = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4y5Z6"
UPPER = "Q3Z7ABCDEFGH2JKLMNPRSTUVWXY456"


def fake(length: int, alphabet: str = MIXED) -> str:
    """A deterministic made-up token body of ``length`` characters."""
    return "".join(itertools.islice(itertools.cycle(alphabet), length))


def b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def armor(word: str, label: str) -> str:
    """A PEM armor line, e.g. ``armor("BEGIN", "RSA PRIVATE KEY")``.

    Assembled so that no complete armor line appears in this file.
    """
    dashes = "-" * 5
    return f"{dashes}{word} {label}{dashes}"


def pem(label: str, *, lines: int = 3, escaped: bool = False) -> str:
    """A made-up PEM block; ``label`` is e.g. "RSA " or "" for a plain key."""
    newline = "\\n" if escaped else "\n"
    body = base64.b64encode(bytes(range(48 * lines))).decode()
    chunks = [body[i : i + 64] for i in range(0, len(body), 64)]
    kind = label + "PRIVATE KEY"
    return newline.join([armor("BEGIN", kind), *chunks, armor("END", kind)])


AWS_KEY_ID = "AK" + "IA" + fake(16, UPPER)
AWS_SECRET = fake(20) + "/" + fake(19, UPPER)  # 40 characters
GITHUB_CLASSIC = "gh" + "p_" + fake(36)
GITHUB_FINE = "github" + "_pat_" + fake(22) + "_" + fake(59)
JWT = ".".join([b64url({"alg": "HS256", "typ": "JWT"}), b64url({"sub": "1234567890"}), fake(43)])
HEX = "0123456789abcdef"
DISCORD = base64.b64encode(b"123456789012345678").decode() + ".Gh7Kq2." + fake(38)
TELEGRAM = "123456789:" + "AA" + fake(33)


def _redacted(text: str) -> Redaction:
    """Redact, and check the result is stable under a second redaction."""
    result = redact(text)
    again = redact(result.text)
    assert again.text == result.text
    assert again.count == 0
    assert again.kinds == ()
    assert result.count == len(result.kinds)
    return result


# --- each pattern -----------------------------------------------------------

# (kind, secret): the secret is redacted whole, whatever text surrounds it.
SHAPES = [
    ("aws-access-key-id", AWS_KEY_ID),
    ("aws-access-key-id", "AS" + "IA" + fake(16, UPPER)),
    ("aws-access-key-id", "AR" + "OA" + fake(16, UPPER)),
    ("github-token", GITHUB_CLASSIC),
    ("github-token", "gh" + "o_" + fake(36)),
    ("github-token", "gh" + "u_" + fake(40)),
    ("github-token", "gh" + "s_" + fake(36)),
    ("github-token", "gh" + "r_" + fake(36)),
    ("github-token", GITHUB_FINE),
    # Placeholder-looking values of a provider's shape are still redacted.
    ("github-token", "gh" + "p_" + "x" * 36),
    ("gitlab-token", "gl" + "pat-" + fake(20)),
    ("slack-token", "xo" + "xb-" + "123456789012-1234567890123-" + fake(24)),
    ("slack-token", "xo" + "xp-" + fake(40)),
    ("stripe-key", "sk" + "_live_" + fake(24)),
    ("stripe-key", "rk" + "_live_" + fake(24)),
    ("stripe-key", "sk" + "_test_" + fake(24)),
    ("anthropic-api-key", "sk" + "-ant-api03-" + fake(93) + "AA"),
    ("openai-api-key", "sk" + "-" + fake(48)),
    ("openai-api-key", "sk" + "-proj-" + fake(40) + "_" + fake(20, "abc-XYZ")),
    ("google-api-key", "AI" + "za" + fake(35)),
    ("npm-token", "np" + "m_" + fake(36)),
    ("pypi-token", "py" + "pi-AgEIcHlwaS5vcmc" + fake(70)),
    ("huggingface-token", "h" + "f_" + fake(34)),
    ("sendgrid-api-key", "S" + "G." + fake(22) + "." + fake(43, MIXED + "-_")),
    ("twilio-api-key", "S" + "K" + fake(32, HEX)),
    ("mailgun-api-key", "ke" + "y-" + fake(32, "3ax6xnjp29jd6fds4gc373sgvjxteol0")),
    ("shopify-token", "shp" + "at_" + fake(32, HEX)),
    ("shopify-token", "shp" + "ss_" + fake(32, HEX)),
    ("shopify-token", "shp" + "ca_" + fake(32, HEX)),
    ("shopify-token", "shp" + "pa_" + fake(32, HEX)),
    ("digitalocean-token", "do" + "p_v1_" + fake(64, HEX)),
    ("digitalocean-token", "do" + "o_v1_" + fake(64, HEX)),
    ("digitalocean-token", "do" + "r_v1_" + fake(64, HEX)),
    ("databricks-token", "da" + "pi" + fake(32, HEX)),
    ("databricks-token", "da" + "pi" + fake(32, HEX) + "-2"),
    ("jwt", JWT),
    ("discord-bot-token", DISCORD),
    ("telegram-bot-token", TELEGRAM),
]


@pytest.mark.parametrize(("kind", "secret"), SHAPES)
def test_provider_token_is_redacted_and_named(kind: str, secret: str) -> None:
    text = f"Deploy with {secret} today."
    result = _redacted(text)
    assert result.text == f"Deploy with {marker(kind)} today."
    assert result.count == 1
    assert result.kinds == (kind,)


@pytest.mark.parametrize(("kind", "secret"), SHAPES)
def test_provider_token_at_the_edges_of_the_text(kind: str, secret: str) -> None:
    assert _redacted(secret).text == marker(kind)
    assert _redacted(f"({secret})").text == f"({marker(kind)})"
    assert _redacted(f'"{secret}"\n').text == f'"{marker(kind)}"\n'


@pytest.mark.parametrize(("kind", "secret"), SHAPES)
def test_provider_token_inside_a_longer_word_is_not_a_token(kind: str, secret: str) -> None:
    assert redact("x" + secret).kinds != (kind,)


def test_slack_webhook_keeps_the_host_and_hides_the_path() -> None:
    path = "T" + fake(8, UPPER) + "/B" + fake(10, UPPER) + "/" + fake(24)
    url = "https://hooks.slack.com/services/" + path
    result = _redacted(f"notify via {url} on failure")
    assert result.text == (
        f"notify via https://hooks.slack.com/services/{marker('slack-webhook')} on failure"
    )
    assert result.kinds == ("slack-webhook",)


@pytest.mark.parametrize(
    "name",
    ["aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "SecretAccessKey", "aws-secret-key"],
)
def test_aws_secret_access_key_under_an_aws_secret_name(name: str) -> None:
    result = _redacted(f"{name} = {AWS_SECRET}\n")
    assert result.text == f"{name} = {marker('aws-secret-access-key')}\n"
    assert result.kinds == ("aws-secret-access-key",)


def test_aws_credentials_file_and_sts_json() -> None:
    credentials = (
        "[default]\n"
        f"aws_access_key_id = {AWS_KEY_ID}\n"
        f"aws_secret_access_key = {AWS_SECRET}\n"
        "region = eu-west-1\n"
    )
    result = _redacted(credentials)
    assert result.kinds == ("aws-access-key-id", "aws-secret-access-key")
    assert "region = eu-west-1" in result.text
    sts = json.dumps(
        {"AccessKeyId": AWS_KEY_ID, "SecretAccessKey": AWS_SECRET, "SessionToken": fake(60)}
    )
    assert _redacted(sts).kinds == (
        "aws-access-key-id",
        "aws-secret-access-key",
        "secret-assignment",
    )


def test_forty_characters_alone_are_not_an_aws_secret() -> None:
    assert _redacted(f"checksum {AWS_SECRET} ok").count == 0


# --- private keys -------------------------------------------------------------


@pytest.mark.parametrize("label", ["RSA ", "EC ", "OPENSSH ", "DSA ", "ENCRYPTED ", ""])
def test_pem_private_key_block_is_redacted_whole(label: str) -> None:
    block = pem(label)
    result = _redacted(f"key file:\n{block}\nend of file\n")
    assert result.text == f"key file:\n{marker('private-key')}\nend of file\n"
    assert result.kinds == ("private-key",)


def test_pem_with_encryption_headers_and_pgp_block() -> None:
    body = base64.b64encode(bytes(range(96))).decode()
    rsa = "RSA PRIVATE KEY"
    legacy = (
        f"{armor('BEGIN', rsa)}\nProc-Type: 4,ENCRYPTED\n"
        "DEK-Info: AES-128-CBC,0123456789ABCDEF\n\n"
        f"{body}\n{armor('END', rsa)}"
    )
    assert _redacted(legacy).text == marker("private-key")
    block = "PGP PRIVATE KEY BLOCK"
    pgp = f"{armor('BEGIN', block)}\n\n{body}\n=ab12\n{armor('END', block)}"
    assert _redacted(pgp).text == marker("private-key")


def test_pem_inside_a_json_string_keeps_the_json() -> None:
    document = '{"type": "service_account", "private_key": "' + pem("", escaped=True) + '\\n"}'
    result = _redacted(document)
    assert result.text == (
        '{"type": "service_account", "private_key": "' + marker("private-key") + '\\n"}'
    )
    assert result.count == 1


def test_truncated_pem_is_redacted_to_the_end_of_the_text() -> None:
    # Without an END line nothing tells the key's last line from what follows.
    lines = pem("OPENSSH ").splitlines()[:3]
    result = _redacted("$ head id_ed25519\n" + "\n".join([*lines, "$ echo done"]))
    assert result.text == f"$ head id_ed25519\n{marker('private-key')}"


def test_truncated_pem_in_a_json_string_is_redacted_to_the_end_of_the_string() -> None:
    lines = pem("").splitlines()[:3]
    document = json.dumps({"stdout": "\n".join(lines), "exit": 1})
    result = _redacted(document)
    assert result.text == json.dumps({"stdout": marker("private-key"), "exit": 1})


@pytest.mark.parametrize("times", [1, 2, 3])
def test_pem_in_json_escaped_again_is_redacted_whole(times: int) -> None:
    # A service-account file given to a tool: its JSON inside the tool's JSON.
    document: str = json.dumps({"private_key": pem("") + "\n", "client_email": "a@b.c"})
    for _ in range(times - 1):
        document = json.dumps({"content": document})
    result = _redacted(document)
    assert result.count == 1
    assert pem("").splitlines()[1] not in result.text
    assert "client_email" in result.text
    for _ in range(times - 1):
        result_document = json.loads(result.text)["content"]
        result = Redaction(text=result_document, count=1, kinds=("private-key",))
    assert json.loads(result.text)["private_key"] == marker("private-key") + "\n"


def test_pem_header_named_in_prose_is_not_a_key() -> None:
    text = f"A key file starts with {armor('BEGIN', 'PRIVATE KEY')} and ends with the END line."
    assert _redacted(text).text == text
    certificate = pem("").replace("PRIVATE KEY", "CERTIFICATE")
    assert _redacted(certificate).text == certificate


# --- URL passwords and Authorization headers ----------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "postgres://admin:" + fake(12) + "@db.internal:5432/app",
            "postgres://admin:{}@db.internal:5432/app",
        ),
        ("redis://:" + fake(10) + "@cache:6379", "redis://:{}@cache:6379"),
        ("https://deploy:" + fake(8) + "@example.com/x", "https://deploy:{}@example.com/x"),
        ("amqp://u:p@ss" + fake(6) + "@mq", "amqp://u:{}@mq"),
    ],
)
def test_password_in_url_keeps_scheme_user_and_host(url: str, expected: str) -> None:
    result = _redacted(f"connect to {url} now")
    assert result.text == "connect to " + expected.format(marker("url-password")) + " now"
    assert result.kinds == ("url-password",)


@pytest.mark.parametrize(
    "url",
    [
        "ssh://git@github.com/owner/repo",
        "git@github.com:owner/repo.git",
        "http://localhost:8080/path",
        "postgres://user:${DB_PASSWORD}@db/app",
        "postgres://user:password@localhost/app",
        "mysql://root:<password>@localhost/app",
        'f"redis://:{password}@{host}"',
    ],
)
def test_urls_without_a_real_password_are_unchanged(url: str) -> None:
    assert _redacted(url).text == url


def test_token_used_as_url_password_is_named_by_its_provider() -> None:
    url = f"https://x-access-token:{GITHUB_CLASSIC}@github.com/o/r.git"
    result = _redacted(url)
    assert result.text == f"https://x-access-token:{marker('github-token')}@github.com/o/r.git"


@pytest.mark.parametrize(
    ("header", "kind"),
    [
        ("Authorization: Bearer " + fake(32), "bearer-token"),
        ("authorization: bearer " + fake(12), "bearer-token"),
        ("Authorization: Token " + fake(40), "bearer-token"),
        (
            "Proxy-Authorization: Basic " + base64.b64encode(b"user:" + fake(10).encode()).decode(),
            "basic-auth",
        ),
    ],
)
def test_authorization_header_keeps_the_scheme(header: str, kind: str) -> None:
    scheme_end = header.rindex(" ") + 1
    result = _redacted(f"curl -H '{header}' https://api.example.com")
    assert result.text == f"curl -H '{header[:scheme_end]}{marker(kind)}' https://api.example.com"
    assert result.kinds == (kind,)


def test_authorization_in_json_headers_and_bare_bearer() -> None:
    headers = json.dumps({"Authorization": "Bearer " + fake(30)})
    assert _redacted(headers).text == json.dumps(
        {"Authorization": "Bearer " + marker("bearer-token")}
    )
    assert _redacted("sent Bearer " + fake(24) + " upstream").text == (
        f"sent Bearer {marker('bearer-token')} upstream"
    )


def test_jwt_as_bearer_token_is_reported_as_jwt() -> None:
    assert (
        _redacted(f"Authorization: Bearer {JWT}").text == f"Authorization: Bearer {marker('jwt')}"
    )


@pytest.mark.parametrize(
    "text",
    [
        "Bearer tokens are sent in the Authorization header.",
        "Authorization: Bearer $TOKEN",
        "Authorization: Bearer ${TOKEN}",
        "Authorization: Bearer <token>",
        "Authorization: Bearer YOUR_TOKEN_HERE",
        "Authorization: Basic abc",
        "Use basic authentication or token authentication.",
    ],
)
def test_authorization_placeholders_and_prose_are_unchanged(text: str) -> None:
    assert _redacted(text).text == text


# --- assignments of secret-looking names --------------------------------------

VALUE = fake(18)


@pytest.mark.parametrize(
    ("template"),
    [
        "API_KEY={}",
        "export API_KEY={}",
        'export API_KEY="{}"',
        "API_KEY='{}'",
        "password: {}",
        "db_password = '{}'",
        '"password": "{}"',
        "'client_secret': '{}'",
        "  apiKey: {}",
        "const accessToken = `{}`;",
        "spring.datasource.password={}",
        "--password={}",
        "X-Api-Key: {}",
        "https://api.example.com/v1?api_key={}&page=2",
        "Cookie: session_token={}; theme=dark",
        'os.environ["GITHUB_TOKEN"] = "{}"',
        'log: {{\\"auth_token\\": \\"{}\\"}}',
        "PGPASSWORD={} psql",
        "DB_PASS={}",
        "DB_PWD={}",
        "SMTP_PASSWD={}",
        "PRIVATE_KEY={}",
        "SESSION_KEY={}",
        "ENCRYPTION_KEY={}",
        "GOOGLE_CREDENTIALS={}",
        "auth: {}",
        "SECRET_KEY_BASE={}",
        "//registry.npmjs.org/:_authToken={}",
        "signing_passphrase := {}",
        "$env:API_TOKEN = '{}'",
        "if password == '{}':",
    ],
)
def test_assignment_keeps_the_name_and_quotes(template: str) -> None:
    result = _redacted(template.format(VALUE))
    assert result.text == template.format(marker("secret-assignment"))
    assert result.kinds == ("secret-assignment",)


def test_assignment_of_a_provider_token_is_reported_once_by_provider() -> None:
    result = _redacted(f"GITHUB_TOKEN={GITHUB_CLASSIC}\nexport OPENAI_API_KEY=sk" + "-" + fake(48))
    assert result.text == (
        f"GITHUB_TOKEN={marker('github-token')}\nexport OPENAI_API_KEY={marker('openai-api-key')}"
    )
    assert result.kinds == ("github-token", "openai-api-key")


@pytest.mark.parametrize(
    "text",
    [
        "PASSWORD=",
        'PASSWORD=""',
        "password: ''",
        "API_KEY=<your-api-key>",
        "API_KEY=your-api-key-here",
        "API_KEY=YOUR_API_KEY",
        "TOKEN=${GITHUB_TOKEN}",
        "TOKEN=${TOKEN:-}",
        "TOKEN=$GITHUB_TOKEN",
        'TOKEN="$(gh auth token)"',
        "TOKEN=%GITHUB_TOKEN%",
        "token: {{ secrets.TOKEN }}",
        "token: ${{ secrets.GITHUB_TOKEN }}",
        "SECRET=xxx",
        "SECRET=xxxxxxxxxxxxxxxx",
        "password: ********",
        "password: changeme",
        "PASSWORD=password",
        "api_key = 'placeholder'",
        "secret: example",
        "password: null",
        "token: None",
        "auth: true",
        "secret: ~",
        "password: !vault |",
        "TOKEN=[REDACTED:github-token]",
        'password: "[REDACTED:secret-assignment]"',
        'api_key="hf_..."',
        "OPENAI_API_KEY=sk-…",
        "token: hf_***",
        'MASK_TOKEN = "[MASK]"',
        'token="my_token"',
        'api_key="fal-ai-api-key"',
        'EXPIRED_TOKEN = "expired_token"',
        '{"Proxy-Authorization": "Basic <username>:<password>"}',
        '{"Authorization": "Bearer {token}"}',
        "password: foobar",
    ],
)
def test_empty_placeholder_and_redacted_values_are_kept(text: str) -> None:
    assert _redacted(text).text == text


def test_azure_storage_key_and_sas_signature_keep_the_connection_string() -> None:
    key = base64.b64encode(fake(64).encode()).decode()
    connection = (
        f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={key};EndpointSuffix=x"
    )
    result = _redacted(connection)
    assert result.text == connection.replace(key, marker("azure-storage-key"))
    signature = fake(30) + "%2B" + fake(8) + "%3D"
    url = f"https://acme.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&se=2026-01-01&sig={signature}"
    assert _redacted(url).text == url.replace(signature, marker("azure-sas-signature"))
    assert _redacted(f'{{"accountKey": "{key}"}}').kinds == ("secret-assignment",)


@pytest.mark.parametrize(
    "text",
    [
        "?state=1&xsig=" + fake(30),  # another parameter
        "https://cdn.example.com/a.png?w=320&sig_v=2",
        "base64 of a discord-like id: "
        + base64.b64encode(b"not-digits-at-all!!").decode()
        + ".Gh7Kq2."
        + fake(38),
        "12345678901:AA" + fake(33),  # 11 digits: not a bot id
        "redis-cli GET key-5d41402abc4b2a76b9719d911017c592",  # key-<md5>, not Mailgun
        "TWILIO_ACCOUNT_SID=AC" + fake(32, HEX),
    ],
)
def test_shapes_that_only_look_like_new_providers_are_kept(text: str) -> None:
    assert _redacted(text).text == text


def test_telegram_token_in_the_api_url_and_json_output() -> None:
    url = f"curl https://api.telegram.org/bot{TELEGRAM}/getMe"
    assert (
        _redacted(url).text
        == f"curl https://api.telegram.org/bot{marker('telegram-bot-token')}/getMe"
    )
    output = json.dumps({"stdout": f"Use this token:\n{TELEGRAM}"})
    assert _redacted(output).kinds == ("telegram-bot-token",)


@pytest.mark.parametrize(
    ("template", "password"),
    [
        ("mysql -h db -u root -p{} shop < dump.sql", fake(12)),
        ("mysqldump -uadmin -p'{}' shop", "pass word 9"),
        ('mysql -u app -p"{}" -e "SELECT 1"', fake(10)),
        ('{{"command":"mysql -uroot -p\\"{}\\" shop"}}', fake(10)),
        ("mariadb --host=db \\\n  -u app -p{}", fake(10)),
        ("curl -u admin:{} https://ci.example.com/api", fake(12)),
        ("curl -sS --user 'deploy:{}' -X POST https://x.example.com", fake(12)),
        ("curl --user=deploy:{} https://x.example.com", fake(12)),
        ('curl -H "Accept: application/json" --user-agent x -u bob:{} https://x', fake(12)),
        ("curl -X POST \\\n  -u bob:{} https://x.example.com", fake(12)),
    ],
)
def test_command_line_passwords(template: str, password: str) -> None:
    result = _redacted(template.format(password))
    assert result.text == template.format(marker("cli-password"))
    assert result.kinds == ("cli-password",)


@pytest.mark.parametrize(
    "text",
    [
        "mysql -h db -u root -p shop",  # -p alone: mysql prompts
        "mysql -u app -P 3306 --protocol=tcp -e 'SELECT 1'",
        'mysql -u root -p"$MYSQL_ROOT_PASSWORD" shop',
        "mysql_config --cflags -pthread",
        'curl -u "$CI_USER:$CI_TOKEN" https://ci.example.com',
        "curl -u admin: https://ci.example.com",  # curl prompts
        "curl -u user:password https://example.com",
        "docker run -u 1000:1000 node:20 npm test",
        "git push -u origin main",
        "Run curl -u with your username to be prompted for the password.",
    ],
)
def test_command_lines_without_a_password_are_kept(text: str) -> None:
    assert _redacted(text).text == text


@pytest.mark.parametrize(
    "template",
    [
        "machine api.example.com login dev@example.com password {}",
        "machine github.com\n  login octocat\n  password {}\n",
        "machine h password {}",
        "default login anonymous password {}",
        '{{"content": "machine h\\n  login u\\n  password {}\\n"}}',
    ],
)
def test_netrc_passwords(template: str) -> None:
    result = _redacted(template.format(fake(16)))
    assert result.text == template.format(marker("netrc-password"))


@pytest.mark.parametrize(
    "text",
    [
        "The default password policy requires 12 characters.",
        "Enter your login and password below.",
        "machine h login u password $NETRC_PASSWORD",
        "Each machine gets a hostname and a key.",
    ],
)
def test_netrc_like_prose_is_kept(text: str) -> None:
    assert _redacted(text).text == text


@pytest.mark.parametrize(
    "text",
    [
        "api_key_id: 123456789012",
        "token_id = 123e4567-e89b-12d3-a456-426614174000",
        "last_token_sha=3f2a9c1e0b7d4a6f8e5c2b1a0d9e8f7a6b5c4d3e",
        '"private_key_id": "3f2a9c1e0b7d4a6f8e5c2b1a0d9e8f7a6b5c4d3e"',
        "apiKeyId: 4f2a9c1",
        "credential_sha256 = " + "ab" * 32,
    ],
)
def test_ids_and_hashes_of_secrets_are_not_secrets(text: str) -> None:
    assert _redacted(text).text == text


def test_an_id_name_keeps_redacting_what_is_not_an_id() -> None:
    assert _redacted(f"token_id = {VALUE}").kinds == ("secret-assignment",)
    # Vault's AppRole secret_id is a uuid, and it is a secret.
    assert _redacted("secret_id = 123e4567-e89b-12d3-a456-426614174000").count == 1


@pytest.mark.parametrize(
    "name", ["DD_APP_KEY", "DATADOG_APP_KEY", "DD-APPLICATION-KEY", "APP_KEY", "ACCOUNT_KEY"]
)
def test_app_and_account_keys_are_secret_names(name: str) -> None:
    assert _redacted(f"{name}: {fake(40, HEX)}").kinds == ("secret-assignment",)


def test_tokens_after_an_escaped_line_break_are_redacted() -> None:
    # Tool output is queued as JSON, where each line starts after "\n".
    output = json.dumps({"stdout": f"env\nPWD=/home/jane\n{GITHUB_CLASSIC}\nAPI_KEY={VALUE}"})
    result = _redacted(output)
    assert result.kinds == ("github-token", "secret-assignment")
    assert "PWD=/home/jane" in result.text


# --- false positives ----------------------------------------------------------

CODE_AND_PROSE = [
    "the token count is 5",
    "The password must have 12 characters; tokens are counted per request.",
    "password_reset_view = views.PasswordResetView.as_view()",
    "def get_token():",
    "def login(username: str, password: str) -> Token:",
    "def f(token: str | None = None, api_key: Optional[str] = None): ...",
    "TOKEN_LIMIT = 4096",
    "MAX_TOKENS=8192",
    '{"max_tokens": 1024, "token_count": 17, "token_type": "bearer"}',
    "PASSWORD_MIN_LENGTH: 12",
    "token_url = 'https://auth.example.com/oauth/token'",
    "PASSWORD_FILE=/run/secrets/db_password",
    "commit 3f2a9c1e0b7d4a6f8e5c2b1a0d9e8f7a6b5c4d3e",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "pip install sk-learn scikit-learn",
    "the task-runner asks for a risk-assessment",
    "token = get_token()",
    "api_key = os.environ['API_KEY']",
    "self.password = password",
    "const apiKey = process.env.API_KEY;",
    "password = request.form.get(name)",
    "token = await client.fetch()",
    "auth = HTTPBasicAuth(user, pw)",
    "use crate::auth::token;",
    "tokenizer = AutoTokenizer.from_pretrained(name)",
    "TOKENIZERS_PARALLELISM=false",
    "author: Jane Doe",
    "Author: Jane Doe <jane@example.com>",
    '"keywords": ["memory", "agents"]',
    "primary_key: id",
    "PWD=/home/jane/src",
    "OLDPWD=/home/jane",
    "SSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.1234",
    "GIT_ASKPASS=/usr/lib/git-core/git-gui--askpass",
    "XAUTHORITY=/run/user/1000/gdm/Xauthority",
    "Token: the smallest unit a model reads.",
    "Credentials: see the team vault.",
    "pin: 1234",
    "passwords_match = first == second",
    "token: int32",
    '<input type="password" name="password" autocomplete="current-password">',
    "bypass: enabled",
    "git@github.com:owner/repo.git",
    "if token == current_token:",
    "if context.token_nesting_level == 0:",
    "# cached token: `get_token()` may refresh; token: re-exchanging is wasteful",
    "Example: `credential.https://huggingface.co.helper=store`",
    "FillMask(score=0.07, token=11098, token_str=' happiness')",
    'Token.Number: "#976806",',
    '"--token": "Use a User Access Token. Prefer setting HF_TOKEN instead.",',
    "print('password:', 'x')",
    "The `Authorization:` (or `Proxy-Authorization:`) header",
    '"auth_time": 1691672844,',
    "POSTGRES_PASSWORD: postgres",
    "//registry.npmjs.org/:_authToken = (protected)",
]


@pytest.mark.parametrize("text", CODE_AND_PROSE)
def test_ordinary_code_and_prose_are_unchanged(text: str) -> None:
    result = _redacted(text)
    assert result.text == text
    assert result.count == 0
    assert result.kinds == ()


def test_numbers_up_to_eight_digits_are_not_secrets_longer_ones_are() -> None:
    assert _redacted("SESSION_PIN: 12345678").count == 0
    assert _redacted("PASSWORD=3.14").count == 0
    assert _redacted("PASSWORD=1234567890").text == "PASSWORD=" + marker("secret-assignment")


def test_plain_words_are_kept_values_with_a_digit_or_symbol_are_not() -> None:
    assert _redacted("password: letmein").count == 0  # reads like a word or a name
    assert _redacted("password: 'letmein'").count == 0
    assert _redacted("password: let-me-in").count == 0  # unquoted: a kebab-case name
    assert _redacted("password: letmein7").count == 1
    assert _redacted("password: let!me!in").count == 1
    assert _redacted("password: 'let-me-in'").count == 1
    assert _redacted('password = "let me in"').count == 1
    assert _redacted('password = "this is a help text"').count == 0  # four words
    assert _redacted('token = "' + fake(30, "abcdefghXYZ") + '"').count == 1  # 25+ letters


# --- several secrets, idempotence, markers ------------------------------------


def test_several_secrets_are_counted_in_text_order() -> None:
    text = (
        f"# deploy notes\nkey id {AWS_KEY_ID}, bot {GITHUB_CLASSIC}\n"
        f"DATABASE_URL=postgres://app:{fake(14)}@db/app\n"
        f"{pem('RSA ')}\n"
        f"export SLACK_BOT_TOKEN=xo" + "xb-" + fake(30) + "\n"
        f"DB_PASSWORD='{fake(16)}'\n"
        "the end\n"
    )
    result = _redacted(text)
    assert result.kinds == (
        "aws-access-key-id",
        "github-token",
        "url-password",
        "private-key",
        "slack-token",
        "secret-assignment",
    )
    assert result.count == 6
    assert result.text.count(MARKER_PREFIX) == 6
    assert result.text.startswith("# deploy notes\nkey id [REDACTED:aws-access-key-id], bot ")
    assert result.text.endswith("DB_PASSWORD='[REDACTED:secret-assignment]'\nthe end\n")


def test_adjacent_secrets_are_all_redacted_and_stay_redacted() -> None:
    openai = "sk" + "-" + fake(48)
    result = _redacted(openai + pem(""))  # the key's right edge is the PEM's dash
    assert result.text == marker("openai-api-key") + marker("private-key")
    assert result.kinds == ("openai-api-key", "private-key")


def test_redacting_twice_changes_nothing() -> None:
    texts = [f"x {secret} y" for _, secret in SHAPES]
    texts += [f"API_KEY={VALUE}", pem("EC "), f"Authorization: Basic {fake(20)}"]
    for text in texts:
        once = redact(text)
        twice = redact(once.text)
        assert once.count == 1
        assert twice == Redaction(text=once.text, count=0, kinds=())


def test_text_without_secrets_is_returned_as_is() -> None:
    assert redact("") == Redaction(text="", count=0, kinds=())
    assert redact("indent with tabs") == Redaction(text="indent with tabs", count=0, kinds=())


def test_non_ascii_text_keeps_offsets() -> None:
    text = f"İstanbul ekibi için şifre: password={VALUE} ve anahtar {GITHUB_CLASSIC} ✓"
    result = _redacted(text)
    assert result.text == (
        "İstanbul ekibi için şifre: password=[REDACTED:secret-assignment] "
        "ve anahtar [REDACTED:github-token] ✓"
    )


def test_redaction_is_frozen_and_kinds_are_listed() -> None:
    result = redact(f"token {GITHUB_CLASSIC}")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        result.count = 0  # type: ignore[misc]
    assert marker("jwt") == "[REDACTED:jwt]"
    assert len(set(KINDS)) == len(KINDS)
    produced = {kind for kind, _ in SHAPES} | {
        "azure-storage-key",
        "azure-sas-signature",
        "cli-password",
        "netrc-password",
        "slack-webhook",
        "aws-secret-access-key",
        "private-key",
        "url-password",
        "bearer-token",
        "basic-auth",
        "secret-assignment",
    }
    assert produced == set(KINDS)


# --- speed: linear, no catastrophic backtracking ------------------------------


def test_large_mixed_text_is_redacted_completely() -> None:
    paragraph = (
        "The user prefers tabs. def get_token(self, key: str) -> str: return self.cache[key]\n"
        "TOKEN_LIMIT = 4096; the token count is 5; see https://example.com/docs?page=2\n"
    )
    secrets = [
        f"GITHUB_TOKEN={GITHUB_CLASSIC}\n",
        f"postgres://app:{fake(12)}@db/app\n",
        f'export API_KEY="{VALUE}"\n',
        f"Authorization: Bearer {fake(32)}\n",
    ]
    parts = []
    for index in range(620):
        parts.append(paragraph)
        if index % 20 == 0:
            parts.append(secrets[(index // 20) % len(secrets)])
    text = "".join(parts)
    assert len(text) > 100_000
    result = _redacted(text)
    assert result.count == 31
    assert GITHUB_CLASSIC not in result.text
    assert VALUE not in result.text


@pytest.mark.parametrize(
    "unit",
    [
        "a=",
        "://:",
        "a://:",
        "a://u:p@",
        "token=",
        "pass",
        'token:"',
        "'token': '",
        "password=\\",
        "a-",
        "key.",
        armor("BEGIN", "PRIVATE KEY"),
        armor("BEGIN", "PRIVATE KEY") + "\nMIIEabcdefghijklmnopq",
        "eyJ",
        "eyJaaaaaaaaaa.",
        "Bearer ",
        "Authorization: Bearer ",
        "sk-",
        "ghp_",
        "github_pat_",
        "AKIA",
        "hooks.slack.com/services/",
        "[REDACTED:",
        "x",
        "mysql ",
        "mysql -u ",
        "curl ",
        "curl -H a ",
        "machine a ",
        "machine a login b ",
        "default login ",
        "sig=",
        "?sig=a",
        ":AA",
        "1234567890:AA",
        "MTIzNDU2Nzg5MDEyMzQ1Njc4.",
        "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gh7Kq2.",
        "key-1",
        "SG.",
        "AccountKey=",
        "\\n",
        "\\nmysql",
        armor("BEGIN", "PRIVATE KEY") + "\\nMIIEabcdefghijklmnopq\\",
        armor("BEGIN", "PRIVATE KEY") + '\\nMIIEabcdefghijklmnopq"',
    ],
)
def test_pathological_input_completes(unit: str) -> None:
    # 50,000 repeats (at most 200,000 characters): a pattern that backtracks
    # quadratically or worse would take minutes here; a linear one, milliseconds.
    text = (unit * 50_000)[:200_000]
    result = redact(text)
    assert len(result.text) > 0
    assert redact(result.text).count == 0
