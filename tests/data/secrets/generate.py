"""Write the secret-redaction corpus: ``secrets.jsonl`` and ``normal.jsonl``.

Every secret is fake: its body is a fixed, visibly patterned run of
characters ("fake", "example", counting hex) in the provider's format, so the
rules see the real shape but no value was ever issued. Prefixes are joined
from pieces here, so this script holds no complete token.

Each line of ``secrets.jsonl`` is ``{"kind", "text", "secret"}``: ``secret``
is the substring that must not survive ``redact(text)``. Each line of
``normal.jsonl`` is ``{"kind", "text"}``: ordinary developer text that
should come back unchanged.

    uv run python tests/data/secrets/generate.py
"""

from __future__ import annotations

import base64
import itertools
import json
from pathlib import Path

HERE = Path(__file__).parent

HEX = "0123456789abcdef"
ALNUM = "Fake0Example1Value2For3Tests4Only5"
B64URL = "fAkE-Ex4mpl3_NoT-rEaL-0123456789"


def run(alphabet: str, length: int, offset: int = 0) -> str:
    """``length`` characters of ``alphabet`` repeated, from ``offset``."""
    return "".join(itertools.islice(itertools.cycle(alphabet), offset, offset + length))


def armor(word: str, label: str) -> str:
    return "-" * 5 + f"{word} {label}" + "-" * 5


def pem_lines(count: int) -> list[str]:
    body = base64.b64encode(b"fake key material for tests only " * 2 * count).decode()
    return ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + body[:32]] + [
        body[i * 64 : i * 64 + 64] for i in range(1, count)
    ]


AWS_ID = "AK" + "IA" + "FAKE2EXAMPLE7KEY"
AWS_SECRET = "fAkE/ExAmPlE+sEcReT" + run(ALNUM, 21)
GITHUB = "gh" + "p_" + run(ALNUM, 36)
GITHUB_FINE = "github" + "_pat_" + run(ALNUM, 22, 3) + "_" + run(ALNUM, 59, 5)
GITLAB = "gl" + "pat-" + run(ALNUM, 20, 7)
SLACK = "xo" + "xb-" + "123456789012-1234567890123-" + run(ALNUM, 24, 2)
SLACK_HOOK = "T0FAKE0001/B0FAKE00002/" + run(ALNUM, 24, 9)
STRIPE = "sk" + "_live_" + run(ALNUM, 24, 4)
ANTHROPIC = "sk" + "-ant-api03-" + run(B64URL, 93) + "AA"
OPENAI = "sk" + "-proj-" + run(B64URL, 40, 6) + "T3Blbk" + "FJ" + run(ALNUM, 20)
GOOGLE = "AI" + "za" + "SyFake" + run(B64URL, 29, 1)
NPM = "np" + "m_" + run(ALNUM, 36, 11)
PYPI = "py" + "pi-AgEIcHlwaS5vcmc" + run(B64URL, 70, 2)
HF = "h" + "f_" + run(ALNUM, 34, 13)
JWT = ".".join(
    [
        base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=").decode(),
        base64.urlsafe_b64encode(b'{"sub":"1234567890","name":"fake"}').rstrip(b"=").decode(),
        run(B64URL, 43, 3),
    ]
)
SENDGRID = "S" + "G." + run(B64URL, 22, 1) + "." + run(B64URL, 43, 5)
TWILIO_SK = "S" + "K" + run("5eed1e55", 32)
DATADOG_APP = run("0d15ea5e", 40)
DATADOG_API = run("c0ffee42", 32)
MAILGUN = "ke" + "y-" + "fake0example1key2not3real4abcdef"
SHOPIFY = {
    prefix: "shp" + prefix + "_" + run(word, 32)
    for prefix, word in zip(
        ["at", "ss", "ca", "pa"], ("facade01", "badc0de7", "b0a7f00d", "feedf4ce"), strict=True
    )
}
DIGITALOCEAN = {
    prefix: prefix + "_v1_" + run(word, 64)
    for prefix, word in zip(
        ("do" + "p", "do" + "o", "do" + "r"), ("0ddba115", "decaf123", "cafe8abe"), strict=True
    )
}
DISCORD = base64.b64encode(b"123456789012345678").decode() + ".GfAkEx." + run(B64URL, 38, 4)
TELEGRAM = "123456789:" + "AA" + run(B64URL, 33, 7)
DATABRICKS = "da" + "pi" + run("abad1dea", 32)
AZURE_KEY = base64.b64encode(
    b"fake azure storage account key, for tests only!!!!!!!!!!!!!!"
).decode()
AZURE_SIG = "fAkEsIgNaTuRe0123456789%2BExAmPlE%2F%3D"
PASSWORD = "Tr0ub4dor-fake-9"


def service_account(private_key: str) -> str:
    """A Google service-account file as written to disk."""
    return json.dumps(
        {
            "type": "service_account",
            "project_id": "acme-prod",
            "private_key_id": run("1d0f5ea1", 40),
            "private_key": private_key,
            "client_email": "deploy@acme-prod.iam.gserviceaccount.com",
        },
        indent=2,
    )


def secrets() -> list[tuple[str, str, str]]:
    key_lines = pem_lines(7)
    rsa_block = "\n".join(
        [armor("BEGIN", "RSA PRIVATE KEY"), *key_lines, armor("END", "RSA PRIVATE KEY")]
    )
    pkcs8 = (
        "\n".join([armor("BEGIN", "PRIVATE KEY"), *key_lines, armor("END", "PRIVATE KEY")]) + "\n"
    )
    write_tool = json.dumps(
        {"file_path": "/home/dev/acme/sa.json", "content": service_account(pkcs8)},
        separators=(",", ":"),
    )
    twice = json.dumps({"tool_input": write_tool})
    truncated = "\n".join([armor("BEGIN", "OPENSSH PRIVATE KEY"), *key_lines])
    truncated_json = json.dumps(
        {"stdout": "\n".join([armor("BEGIN", "PRIVATE KEY"), *key_lines[:5]]), "exit": 0}
    )
    netrc = (
        "machine github.com\n  login octocat\n  password "
        + GITHUB[:4]
        + "fake"
        + run(ALNUM, 20)
        + "\n"
    )
    return [
        (
            "aws-access-key-id",
            f"[default]\naws_access_key_id = {AWS_ID}\nregion = eu-west-1",
            AWS_ID,
        ),
        ("aws-secret-access-key", f"aws_secret_access_key = {AWS_SECRET}\n", AWS_SECRET),
        (
            "github-token",
            f"git remote set-url origin https://{GITHUB}@github.com/acme/shop.git",
            GITHUB,
        ),
        ("github-fine-grained", f"export GH_TOKEN={GITHUB_FINE}", GITHUB_FINE),
        (
            "gitlab-token",
            f"curl --header 'PRIVATE-TOKEN: {GITLAB}' https://gitlab.example.com/api/v4/projects",
            GITLAB,
        ),
        ("slack-token", f"SLACK_BOT_TOKEN={SLACK}\nSLACK_CHANNEL=#deploys", SLACK),
        ("slack-webhook", f"webhook: https://hooks.slack.com/services/{SLACK_HOOK}", SLACK_HOOK),
        ("stripe-key", f'stripe.api_key = "{STRIPE}"', STRIPE),
        ("anthropic-api-key", f"ANTHROPIC_API_KEY={ANTHROPIC} uv run evals.py", ANTHROPIC),
        ("openai-api-key", f'client = OpenAI(api_key="{OPENAI}")', OPENAI),
        (
            "google-api-key",
            f"https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key={GOOGLE}",
            GOOGLE,
        ),
        ("npm-token", f"//registry.npmjs.org/:_authToken={NPM}", NPM),
        ("pypi-token", f"[pypi]\nusername = __token__\npassword = {PYPI}\n", PYPI),
        ("huggingface-token", f"huggingface-cli login --token {HF}", HF),
        ("jwt", f"curl -H 'Authorization: Bearer {JWT}' https://api.acme.dev/me", JWT),
        (
            "url-password",
            f"DATABASE_URL=postgres://shop:{PASSWORD}@db.internal:5432/shop",
            PASSWORD,
        ),
        (
            "url-password",
            "redis-cli -u redis://:fake9Redis7Pass@cache:6379 ping",
            "fake9Redis7Pass",
        ),
        (
            "basic-auth",
            "Authorization: Basic " + base64.b64encode(b"deploy:fake-pass-42").decode(),
            base64.b64encode(b"deploy:fake-pass-42").decode(),
        ),
        (
            "bearer-token",
            "GET /v1/orders HTTP/1.1\nAuthorization: Bearer fake0bearer1token2value3",
            "fake0bearer1token2value3",
        ),
        ("private-key", f"$ cat ~/.ssh/deploy_rsa\n{rsa_block}\n", key_lines[3]),
        (
            "dotenv-password",
            "DB_HOST=db.internal\nDB_PASSWORD=Fake-db-pass-77\nDB_PORT=5432",
            "Fake-db-pass-77",
        ),
        (
            "compose-password",
            'environment:\n  POSTGRES_PASSWORD: "S3cure!fake"\n  POSTGRES_DB: shop',
            "S3cure!fake",
        ),
        (
            "django-secret-key",
            "SECRET_KEY = 'django-insecure-fake0k3y!for%tests@only'",
            "django-insecure-fake0k3y!for%tests@only",
        ),
        (
            "json-client-secret",
            '{"client_id": "acme-web", "client_secret": "fAkE0cLiEnT1sEcReT2vAlUe"}',
            "fAkE0cLiEnT1sEcReT2vAlUe",
        ),
        (
            "k8s-secret-data",
            "data:\n  username: YWRtaW4=\n  password: ZmFrZS1wYXNzd29yZC0xMjM=\n",
            "ZmFrZS1wYXNzd29yZC0xMjM=",
        ),
        (
            "api-key-header",
            f"curl -H 'X-Api-Key: {DATADOG_API}' https://api.example.com/v2/ping",
            DATADOG_API,
        ),
        (
            "twilio-auth-token",
            f"TWILIO_ACCOUNT_SID=AC{run(HEX, 32)}\nTWILIO_AUTH_TOKEN={run('a11ce5ba', 32)}",
            run("a11ce5ba", 32),
        ),
        (
            "azure-storage-key",
            f"DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey={AZURE_KEY};EndpointSuffix=core.windows.net",
            AZURE_KEY,
        ),
        (
            "azure-storage-key",
            f'"storage": {{"accountName": "acmeprod", "accountKey": "{AZURE_KEY}"}}',
            AZURE_KEY,
        ),
        (
            "azure-sas-signature",
            f"https://acmeprod.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&spr=https&sig={AZURE_SIG}",
            AZURE_SIG,
        ),
        (
            "azure-sas-signature",
            f"BlobEndpoint=https://acmeprod.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sp=rl&sig={AZURE_SIG}",
            AZURE_SIG,
        ),
        (
            "azure-service-bus",
            f"Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={AZURE_KEY}",
            AZURE_KEY,
        ),
        ("sendgrid-api-key", f"sg = SendGridAPIClient('{SENDGRID}')", SENDGRID),
        ("sendgrid-api-key", f"SENDGRID_API_KEY={SENDGRID}", SENDGRID),
        ("twilio-api-key", f"client = Client('{TWILIO_SK}', api_secret, account_sid)", TWILIO_SK),
        (
            "datadog-app-key",
            f"export DD_API_KEY={DATADOG_API}\nexport DD_APP_KEY={DATADOG_APP}",
            DATADOG_APP,
        ),
        (
            "datadog-app-key",
            'curl -X GET "https://api.datadoghq.com/api/v1/dashboard"'
            f' -H "DD-API-KEY: ${{DD_API_KEY}}" -H "DD-APPLICATION-KEY: {DATADOG_APP}"',
            DATADOG_APP,
        ),
        (
            "mailgun-api-key",
            f"requests.post(url, auth=('api', '{MAILGUN}'), data=message)",
            MAILGUN,
        ),
        ("shopify-token", f"X-Shopify-Access-Token: {SHOPIFY['at']}", SHOPIFY["at"]),
        ("shopify-token", f"shopify app secret {SHOPIFY['ss']} rotated", SHOPIFY["ss"]),
        ("shopify-token", f"custom app {SHOPIFY['ca']}, partner {SHOPIFY['pa']}", SHOPIFY["pa"]),
        (
            "digitalocean-token",
            f"doctl auth init --access-token {DIGITALOCEAN['do' + 'p']}",
            DIGITALOCEAN["do" + "p"],
        ),
        (
            "digitalocean-token",
            f"oauth: {{access: {DIGITALOCEAN['do' + 'o']}, refresh: {DIGITALOCEAN['do' + 'r']}}}",
            DIGITALOCEAN["do" + "r"],
        ),
        ("discord-bot-token", f"client.run('{DISCORD}')", DISCORD),
        ("telegram-bot-token", f"curl https://api.telegram.org/bot{TELEGRAM}/getMe", TELEGRAM),
        (
            "telegram-bot-token",
            f"BotFather: Use this token to access the HTTP API:\n{TELEGRAM}",
            TELEGRAM,
        ),
        (
            "databricks-token",
            "databricks configure --host https://adb-1234.azuredatabricks.net"
            f" --token {DATABRICKS}",
            DATABRICKS,
        ),
        (
            "mysql-password",
            "mysql -h db.internal -u root -pFake0Root7Pass shop < dump.sql",
            "Fake0Root7Pass",
        ),
        (
            "mysql-password",
            "mysqldump -uadmin -p'fake pass 9' --single-transaction shop > shop.sql",
            "fake pass 9",
        ),
        (
            "mysql-password",
            'mysql --user=app --password="fakeApp#Pass1" -e "SHOW DATABASES"',
            "fakeApp#Pass1",
        ),
        ("pgpassword", "PGPASSWORD='fakePg&Pass2' psql -h db -U app shop", "fakePg&Pass2"),
        (
            "netrc",
            "machine api.heroku.com login dev@acme.dev"
            " password 01234567-89ab-cdef-0123-456789abcdef",
            "01234567-89ab-cdef-0123-456789abcdef",
        ),
        ("netrc", netrc, netrc.split("password ")[1].strip()),
        (
            "curl-user",
            "curl -u admin:fake0Admin9Pass https://ci.acme.dev/api/json",
            "fake0Admin9Pass",
        ),
        (
            "curl-user",
            'curl -sS --user "deploy:fake-Deploy-Pass-3" -X POST https://nexus.acme.dev/upload',
            "fake-Deploy-Pass-3",
        ),
        ("service-account-json", service_account(pkcs8), key_lines[2]),
        ("service-account-write-tool", write_tool, key_lines[4]),
        ("service-account-escaped-twice", twice, key_lines[6]),
        ("truncated-pem", f"$ head -8 id_ed25519\n{truncated}\n$ echo done", key_lines[6]),
        ("truncated-pem-json", truncated_json, key_lines[4]),
    ]


def normal() -> list[tuple[str, str]]:
    sha = "3f2a9c1e0b7d4a6f8e5c2b1a0d9e8f7a6b5c4d3e"
    uuid = "123e4567-e89b-12d3-a456-426614174000"
    return [
        ("key-id", "api_key_id: 123456789012"),
        ("token-id", f"token_id = {uuid}"),
        ("git-sha", f"last_token_sha={sha}"),
        ("git-sha", f"commit {sha}\nAuthor: Jane Doe <jane@example.com>"),
        ("git-sha", "HEAD is now at 3f2a9c1 Fix token refresh race in auth middleware"),
        ("uuid", f"request_id={uuid} status=200 duration_ms=41"),
        ("uuid", f'{{"session_id": "{uuid}", "event": "login", "ok": true}}'),
        ("key-id", '"private_key_id": "' + sha + '",'),
        ("key-id", "kid: 2024-05-rotation-1"),
        ("digest", "docker pull ghcr.io/acme/shop@sha256:" + sha + "0123456789abcdef01234567"),
        (
            "integrity",
            '"integrity": "sha512-'
            + base64.b64encode(b"not a secret, a package hash" * 2).decode()
            + '"',
        ),
        (
            "base64",
            "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        ),
        (
            "base64",
            "ca.crt: "
            + base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB...not a key").decode(),
        ),
        ("base64", "Content-MD5: Q2hlY2sgSW50ZWdyaXR5IQ=="),
        ("etag", 'ETag: "33a64df551425fcc55e4d42a148795d9f25f89d4"'),
        ("version", "Python 3.11.9 (main, Apr  2 2024, 08:25:04) [GCC 13.2.0] on linux"),
        ("version", "requests==2.31.0\nurllib3>=1.21.1,<3\ncertifi>=2017.4.17"),
        ("version", "node v20.11.1, npm 10.2.4, pnpm 8.15.4"),
        ("url", "https://github.com/acme/shop/pull/1423/files#diff-3f2a9c1e0b7d"),
        ("url", "https://acme.myshopify.com/admin/api/2024-01/orders.json?status=any&limit=50"),
        ("url", "https://acmeprod.blob.core.windows.net/public/logo.png"),
        ("url", "https://docs.datadoghq.com/account_management/api-app-keys/"),
        ("url", "see https://api.telegram.org/bot<token>/getUpdates for the format"),
        ("commit", "Rotate the SendGrid key and move it to the vault (closes #311)"),
        ("commit", "fix(auth): keep the token_type when refreshing; add token expiry test"),
        ("config", 'log_level = "debug"\nmax_connections = 100\npool_timeout = 30'),
        ("config", "DD_SITE=datadoghq.eu\nDD_SERVICE=checkout\nDD_ENV=prod"),
        ("config", f"TWILIO_ACCOUNT_SID=AC{run(HEX, 32)}"),
        ("config", "SENDGRID_TEMPLATE_ID=d-" + run(HEX, 32, 4)),
        ("config", "secretName: tls-cert\nsecretKeyRef:\n  name: db\n  key: password"),
        ("config", "AZURE_STORAGE_ACCOUNT=acmeprod\nAZURE_STORAGE_CONTAINER=backups"),
        ("config", "[mysqld]\nport = 3306\nbind-address = 127.0.0.1"),
        (
            "config",
            '"publicKey": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeFakeFakeFakeFake dev@laptop"',
        ),
        ("config", "telegram:\n  chat_id: -1001234567890\n  parse_mode: HTML"),
        ("config", "channel_id: 1098765432109876543"),
        ("log", "2024-05-01 12:00:00,123 INFO auth: token refreshed for user 42 (expires_in=3600)"),
        ("log", "2024-05-01T12:00:01Z WARN shopify: rate limited, retry in 2s (bucket 39/40)"),
        ("log", '{"level":"info","msg":"request done","tokens_used":1532,"model":"small-2"}'),
        ("log", "npm WARN deprecated inflight@1.0.6: This module is not supported"),
        ("log", "Droplet 123456789 created in fra1 (s-1vcpu-1gb)"),
        ("command", "mysql -h db.internal -u root -p shop"),
        ("command", "mysql -u app -P 3306 --protocol=tcp -e 'SELECT 1'"),
        ("command", "psql -h localhost -U app -d shop -c '\\dt'"),
        ("command", 'curl -sSL -u "$CI_USER:$CI_TOKEN" https://ci.acme.dev/api/json'),
        ("command", "docker run --rm -u 1000:1000 -v $PWD:/src node:20 npm test"),
        ("command", "git push -u origin feature/login"),
        (
            "command",
            "curl -fsSL https://get.example.com/install.sh | sh -s -- --user-agent acme:1.0",
        ),
        ("prose", "Enter your login and password below, then press Continue."),
        ("prose", "The default password policy requires 12 characters."),
        ("prose", "Each machine gets a hostname and an SSH key from the provisioner."),
        ("prose", "Discord bot tokens have three parts separated by dots; never commit one."),
        ("code", "def verify(token: str, *, key_id: str | None = None) -> Claims:"),
        ("code", 'cache_key = f"user:{user_id}:orders:{page}"'),
        ("code", 'headers = {"Authorization": f"Bearer {token}"}'),
        ("code", 'assert response.json()["token_type"] == "bearer"'),
        ("arn", "arn:aws:iam::123456789012:role/deploy-prod"),
        ("command", 'mysql -u root -p"$MYSQL_ROOT_PASSWORD" shop'),
        ("cache-key", "redis-cli GET key-5d41402abc4b2a76b9719d911017c592"),
        ("url", "https://cdn.example.com/img/hero.png?w=320&h=200&fit=crop&sig_v=2"),
        (
            "log",
            "ERROR 1045 (28000): Access denied for user 'app'@'10.0.0.7' (using password: YES)",
        ),
        ("prose", "Run curl -u with only your username and curl prompts for the password."),
        ("config", '"app_key_id": 48213, "app_name": "checkout"'),
    ]


def main() -> None:
    with (HERE / "secrets.jsonl").open("w") as out:
        for kind, text, secret in secrets():
            assert secret in text, kind
            out.write(json.dumps({"kind": kind, "text": text, "secret": secret}) + "\n")
    with (HERE / "normal.jsonl").open("w") as out:
        for kind, text in normal():
            out.write(json.dumps({"kind": kind, "text": text}) + "\n")


if __name__ == "__main__":
    main()
