"""Generate the conversational recall set in bench/data/conversations.

A deterministic generator (``random.Random(SEED)``) over templates and
vocabularies written for this project; nothing is copied from another data
set. It writes the turns of long multi-session conversations between a user
and a coding agent on four made-up projects, one store each, as memories, and
questions about them as queries:

- ``paraphrase``: a fact said once in passing, asked later in other words (for
  half of them the component is named by what it does, not by its name);
- ``temporal``: a version pin or a decision that a later session corrects,
  asked as "which did we pick first", "what is it now", "what did we use
  before switching to Y";
- ``identifier``: a function name, config key, environment variable or
  ticket id, asked verbatim or by its words in prose;
- ``error``: an error message pasted or described, with its fix as the answer.

Every answer has near misses beside it: the same template said of another
component, the same attribute with other values, identifiers one word or one
digit apart, the same exception with another table, and chatter that names the
same components and libraries.

    uv run python bench/conversation_set.py          # write the JSONL files
    uv run python bench/conversation_set.py --check  # fail if they are stale
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from data_sets import DATA

SEED = 15
FOLDER = DATA / "conversations"
#: Query types, in the order the bench prints them.
TYPES = ("paraphrase", "temporal", "identifier", "error")
#: Sessions per project, and chatter turns added to each session.
SESSIONS = 30
CHATTER_PER_SESSION = 12
START = date(2026, 1, 5)


@dataclass(frozen=True)
class Component:
    """A part of a project: its name in code and what it does, in plain words."""

    name: str
    description: str


@dataclass(frozen=True)
class Project:
    """A made-up project and the vocabulary its conversations use."""

    store: str
    ticket: str
    components: tuple[Component, ...]
    libraries: tuple[tuple[str, str, tuple[str, ...]], ...]  # name, what it is, versions
    tables: tuple[str, ...]
    nouns: tuple[str, ...]


PEOPLE = ("Priya", "Tomasz", "Aiko", "Mateus", "Ingrid", "Kwame", "Lucía", "Dmitri", "Sana")
HOSTS = ("heron", "osprey", "kite", "plover", "tern", "egret", "shrike", "wren")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
REGIONS = ("EU", "APAC", "Canadian", "Brazilian", "US-East", "Nordic")
CUSTOMERS = ("Halvorsen Freight", "Bluefin Dental", "Marlow & Sons", "Qadir Textiles", "Oakridge")
VENDORS = ("Stripe", "Twilio", "SendGrid", "Mapbox", "Algolia", "Segment")
CHANNELS = ("arch-notes", "eng-decisions", "platform", "design-reviews", "backend")

PROJECTS = (
    Project(
        store="orbit/billing",
        ticket="BIL",
        components=(
            Component("ledger", "the part that records every charge and refund"),
            Component("invoicer", "the thing that turns usage into monthly bills"),
            Component("dunning", "the flow that chases customers whose cards fail"),
            Component("taxcalc", "the service working out VAT and sales tax"),
            Component("payouts", "the job sending money to partner accounts"),
            Component("meter", "the piece that counts API calls per customer"),
        ),
        libraries=(
            ("pydantic", "the validation library", ("2.5.3", "2.6.1", "2.7.4", "2.8.2")),
            ("httpx", "the HTTP client", ("0.25.2", "0.26.0", "0.27.2", "0.28.1")),
            ("sqlalchemy", "the ORM", ("2.0.23", "2.0.25", "2.0.29", "2.0.31")),
            ("celery", "the task queue", ("5.3.4", "5.3.6", "5.4.0", "5.4.1")),
            ("stripe", "the payment SDK", ("7.9.0", "8.1.0", "8.4.0", "9.0.0")),
            ("alembic", "the migration tool", ("1.12.1", "1.13.0", "1.13.1", "1.13.2")),
        ),
        tables=("invoices", "ledger_entries", "customers", "payouts", "tax_rates", "usage"),
        nouns=("invoice", "charge", "refund", "tenant", "quota", "balance", "credit", "usage"),
    ),
    Project(
        store="orbit/console",
        ticket="CON",
        components=(
            Component("dashboard", "the landing page users see after login"),
            Component("authgate", "the code deciding who may sign in"),
            Component("reports", "the screens that export spreadsheets"),
            Component("settings", "the page where admins change their workspace"),
            Component("notifier", "the bell icon and its unread alerts"),
            Component("onboarding", "the wizard new accounts walk through"),
        ),
        libraries=(
            ("react", "the UI framework", ("18.2.0", "18.3.1", "19.0.0", "19.1.0")),
            ("vite", "the bundler", ("5.0.12", "5.1.4", "5.2.8", "6.0.3")),
            ("zod", "the schema checker", ("3.22.2", "3.22.4", "3.23.8", "3.24.1")),
            ("playwright", "the browser test runner", ("1.40.1", "1.41.2", "1.43.0", "1.45.1")),
            ("tanstack-query", "the data fetching cache", ("5.17.9", "5.24.1", "5.40.0")),
            ("tailwindcss", "the styling toolkit", ("3.4.0", "3.4.1", "3.4.3", "4.0.0")),
        ),
        tables=("sessions", "workspaces", "members", "alerts", "exports", "invites"),
        nouns=("workspace", "member", "alert", "export", "invite", "session", "role", "token"),
    ),
    Project(
        store="fjord/ingest",
        ticket="ING",
        components=(
            Component("collector", "the endpoint that receives raw events"),
            Component("dedupe", "the stage throwing away repeated records"),
            Component("enricher", "the step that adds geo and device data"),
            Component("compactor", "the job merging small files into big ones"),
            Component("router", "the piece choosing which topic a record goes to"),
            Component("backfill", "the tool replaying old days of data"),
        ),
        libraries=(
            ("kafka-go", "the message broker client", ("0.4.42", "0.4.44", "0.4.47")),
            ("parquet-go", "the columnar file writer", ("0.19.0", "0.20.0", "0.21.0", "0.23.0")),
            ("zap", "the logger", ("1.25.0", "1.26.0", "1.27.0")),
            ("pgx", "the Postgres driver", ("5.4.3", "5.5.1", "5.5.5", "5.6.0")),
            ("otel", "the tracing SDK", ("1.21.0", "1.22.0", "1.24.0", "1.28.0")),
            ("grpc-go", "the RPC framework", ("1.59.0", "1.60.1", "1.62.1", "1.64.0")),
        ),
        tables=("events", "devices", "partitions", "offsets", "geo_cache", "replays"),
        nouns=("event", "record", "batch", "partition", "offset", "schema", "topic", "device"),
    ),
    Project(
        store="fjord/mobile",
        ticket="MOB",
        components=(
            Component("feed", "the scrolling list on the home tab"),
            Component("checkout", "the screens where people pay"),
            Component("sync", "the code keeping offline edits in step with the server"),
            Component("camera", "the photo capture screen"),
            Component("push", "the notifications that arrive on the lock screen"),
            Component("profile", "the page showing a user's own details"),
        ),
        libraries=(
            ("okhttp", "the network client", ("4.11.0", "4.12.0", "5.0.0-alpha.12")),
            ("room", "the local database layer", ("2.5.2", "2.6.0", "2.6.1")),
            ("compose-bom", "the UI toolkit bill of materials", ("2023.10.01", "2024.02.00")),
            ("coil", "the image loader", ("2.4.0", "2.5.0", "2.6.0", "3.0.0")),
            ("hilt", "the dependency injection", ("2.48.1", "2.50", "2.51.1")),
            ("ktor", "the server client", ("2.3.6", "2.3.8", "2.3.11", "3.0.0")),
        ),
        tables=("drafts", "outbox", "photos", "carts", "profiles", "receipts"),
        nouns=("draft", "photo", "cart", "receipt", "profile", "badge", "thumbnail", "order"),
    ),
)

#: Facts said in passing: (statement, near-miss statement, question). Slots:
#: {c} component, {cd} its description, {p}/{p2} people, {h}/{h2} hosts, {n}/{n2}
#: numbers, {day}, {region}, {cust}, {vendor}, {chan}, {ticket}.
FACTS: tuple[tuple[str, str, str], ...] = (
    (
        "{p} owns {c} now, since {p2} moved to the data team",
        "{p2} used to review most of the {c} pull requests",
        "who is responsible for {cd} these days?",
    ),
    (
        "the staging copy of {c} runs on {h}-{n}",
        "the production copy of {c} runs on {h2}-{n2}",
        "which machine hosts the pre-production version of {cd}?",
    ),
    (
        "{c} keeps cached results for {n} minutes before it fetches again",
        "{c} keeps its access logs for {n2} days",
        "how long until {cd} treats what it has stored as stale?",
    ),
    (
        "we never ship {c} on a {day}, {p} got burned by that last spring",
        "{p} likes to demo {c} changes on {day} afternoons",
        "is there a day of the week we avoid releasing {cd}?",
    ),
    (
        "the nightly job of {c} kicks off at 0{n1}:30 UTC",
        "the weekly report of {c} goes out at 0{n1}:00 UTC on Mondays",
        "at what time does the overnight run of {cd} begin?",
    ),
    (
        "{c} talks to Postgres through a pool of {n} connections",
        "{c} opens {n2} worker threads at start-up",
        "how many simultaneous database sessions can {cd} hold?",
    ),
    (
        "the new flow in {c} is still switched off for {region} customers",
        "the new flow in {c} was turned on for internal accounts first",
        "which clients don't get the redesigned behaviour of {cd} yet?",
    ),
    (
        "the Grafana board for {c} is the one called '{c} golden signals'",
        "the alert rules for {c} live in alerts/{c}.yaml",
        "where can I watch graphs of how healthy {cd} is?",
    ),
    (
        "{p} wants squash merges for anything that touches {c}",
        "{p} asked for two approvals on {c} changes during the freeze",
        "how should I combine my branch when the change affects {cd}?",
    ),
    (
        "the pager for {c} hands over every {day} at noon",
        "{p2} is the backup on call for {c} this month",
        "on which day does the on-call shift for {cd} rotate?",
    ),
    (
        "the load test said {c} tops out near {n}00 requests a second",
        "the load test of {c} ran for {n2} minutes against staging",
        "what throughput ceiling did we measure for {cd}?",
    ),
    (
        "{c} must stay under {n}00 MB or Kubernetes kills the pod",
        "{c} asks for {n2}00 millicores of CPU in its deployment",
        "how much RAM can {cd} use before its container is evicted?",
    ),
    (
        "the integration tests of {c} need the {vendor} mock server started first",
        "the unit tests of {c} mock {vendor} with recorded fixtures",
        "what has to be running before the end-to-end checks of {cd}?",
    ),
    (
        "credentials for {c} are read from the vault path kv/{c}/runtime",
        "the public settings of {c} are in config/{c}.toml",
        "where are the secrets of {cd} kept?",
    ),
    (
        "we promised {cust} {n}.9 percent availability for {c}",
        "{cust} asked for a status page covering {c}",
        "what uptime did we commit to for {cd}?",
    ),
    (
        "{c} retries a failed upstream call {n1} times with exponential backoff",
        "{c} times out an upstream call after {n2} seconds",
        "how many attempts does {cd} make before it gives up on a dependency?",
    ),
    (
        "the heaviest user of {c} by far is {cust}",
        "{cust} reported a slow page in {c} in {ticket}",
        "which client puts the most load on {cd}?",
    ),
    (
        "the architecture write-up for {c} is pinned in #{chan}",
        "{p} posts the {c} release notes in #{chan}",
        "where do I find the design document of {cd}?",
    ),
    (
        "moving {c} off the legacy tokens is blocked on {ticket}",
        "{ticket} also tracks the logging clean-up in {c}",
        "what is holding up the migration of {cd} away from the old login scheme?",
    ),
    (
        "{c} writes its audit trail to the {table} table, nothing else does",
        "{c} reads the {table} table but never writes to it",
        "which table receives the audit records of {cd}?",
    ),
)

#: Decisions that a later session changes: (topic, topic in other words, options).
DECISIONS: tuple[tuple[str, str, tuple[str, str, str]], ...] = (
    (
        "pagination in {c}",
        "how {cd} splits long result lists",
        ("cursor tokens", "offset and limit", "keyset paging on created_at"),
    ),
    (
        "the retry policy of {c}",
        "what {cd} does when a call fails",
        ("five retries then a dead-letter queue", "retry forever capped at an hour", "no retry"),
    ),
    (
        "feature flags for {c}",
        "how we toggle unfinished work in {cd}",
        ("a LaunchDarkly project", "a flags table in Postgres", "environment variables"),
    ),
    (
        "the test layout of {c}",
        "where the checks for {cd} are organised",
        ("tests next to the code", "one top-level tests folder", "a separate test package"),
    ),
    (
        "error reporting in {c}",
        "how crashes in {cd} get to us",
        ("Sentry", "plain structured logs", "the OpenTelemetry collector"),
    ),
    (
        "the release cadence of {c}",
        "how often {cd} goes out",
        ("every merge to main", "a weekly train on Tuesdays", "twice a month"),
    ),
    (
        "the date format in {c}",
        "how {cd} writes timestamps",
        ("ISO 8601 in UTC", "epoch milliseconds", "local time with offset"),
    ),
    (
        "caching in {c}",
        "how {cd} avoids recomputing things",
        ("Redis with a five minute TTL", "an in-process LRU", "no cache at all"),
    ),
)

VERBS = ("resolve", "compute", "load", "build", "apply", "validate", "sync", "merge", "parse")
KEY_PARTS = ("max_backoff_ms", "batch_size", "timeout_s", "retry_limit", "page_size", "ttl_s")
ENV_PARTS = ("URL", "TIMEOUT", "REGION", "BUCKET", "POOL_SIZE", "API_KEY_ID")

#: Error families: (message, what it is in plain words, two fixes). Slots:
#: {table}, {col}, {h}, {n}, {c}, {noun}, {func}, {vendor}.
ERRORS: tuple[tuple[str, str, tuple[str, str]], ...] = (
    (
        'duplicate key value violates unique constraint "{table}_{col}_key"',
        "inserting a {col} twice into {table} fails on the uniqueness rule",
        ("use an upsert instead of a plain insert", "dedupe the batch before writing it"),
    ),
    (
        "TimeoutError: timed out after {n}s waiting for {h}:5432",
        "the database box {h} stops answering in time",
        ("raise the statement timeout for the job", "point it at the read replica"),
    ),
    (
        "KeyError: '{noun}_id' in {func}",
        "{func} blows up because a {noun} id is missing",
        ("guard the lookup with .get and log the record", "backfill the ids first"),
    ),
    (
        "ECONNREFUSED 127.0.0.1:{n}80",
        "nothing is listening on local port {n}80",
        ("start the dependency with make services", "set the port in .env.local"),
    ),
    (
        "OOMKilled: container {c} exceeded memory limit",
        "{c} runs out of memory and is killed",
        ("raise the limit in values.yaml", "stream the rows instead of loading them all"),
    ),
    (
        "permission denied for table {table}",
        "the app role is not allowed to read {table}",
        ("grant the role in the next migration", "connect as the owner role for migrations"),
    ),
    (
        "x509: certificate signed by unknown authority ({h}.internal)",
        "TLS to {h} fails because its certificate is not trusted",
        ("add the CA bundle to the image", "mount the internal root certificate"),
    ),
    (
        "429 Too Many Requests from the {vendor} API",
        "{vendor} rate-limits us",
        ("back off and honour the Retry-After header", "batch the calls ten at a time"),
    ),
    (
        'FATAL: too many connections for role "{c}_app"',
        "Postgres refuses new sessions for the {c} user",
        ("put pgbouncer in front", "lower the pool size per worker"),
    ),
    (
        "ValueError: invalid literal for int() with base 10: '{noun}'",
        "{func} tries to turn the word {noun} into a number",
        ("skip the header row of the CSV", "validate the field before casting"),
    ),
    (
        "panic: runtime error: index out of range [{n}] with length {n}",
        "{c} crashes reading past the end of a slice",
        ("check the length before indexing", "copy the slice before the goroutine uses it"),
    ),
    (
        "yaml.scanner.ScannerError: mapping values are not allowed here (deploy/{c}.yaml)",
        "the deploy file of {c} is not valid YAML",
        ("quote the colon in the value", "fix the indentation of the env block"),
    ),
    (
        "413 Request Entity Too Large from {c}",
        "{c} rejects uploads that are too big",
        ("raise client_max_body_size in the ingress", "upload in chunks instead"),
    ),
    (
        "column {table}.{col} does not exist",
        "a query asks {table} for a {col} it lacks",
        ("run the missing migration first", "regenerate the ORM models"),
    ),
)

#: Chatter: turns naming components, libraries and people that answer nothing.
CHATTER = (
    "can you rerun CI on {c}? the {lib} step timed out again",
    "{p}: looks fine to me, merging the {c} change",
    "ok, the {c} tests pass locally now",
    "let's look at {c} after lunch, I need to reply to {p} first",
    "I renamed a couple of variables in {c}, nothing functional",
    "the {c} build is green again after the {lib} cache was cleared",
    "{p} asked whether {c} could get a quick code review today",
    "please add a changelog line for the {c} fix",
    "done, pushed the {c} branch, opening the PR now",
    "the flaky {c} test passed three times in a row, leaving it",
    "I'm reading through {c} to understand how the {noun} handling works",
    "no strong opinion on naming in {c}, pick whatever reads best",
    "the {lib} upgrade notes don't mention anything that touches {c}",
    "what does the {noun} field mean in {c} again? never mind, found it",
    "profiling {c} now, the {noun} loop looks hot but it's fine",
    "{p} and I paired on {c} for an hour, mostly reading code",
    "let's split the {c} PR into two, it's getting long",
    "the {table} migration for {c} ran cleanly on staging",
    "thanks, that explanation of {c} helped",
    "I'll write up the {c} findings tomorrow",
)

LEAD_INS = ("", "", "oh, before I forget: ", "side note, ", "btw ", "for the record, ", "fyi ")
TRAILS = ("", "", ". anyway, back to the {c2} work", ". ok, next thing", ". moving on")


@dataclass
class Turn:
    """One memory: a turn said in a session, and the queries it answers."""

    session: int
    speaker: str
    text: str
    label: str = ""


@dataclass
class Conversation:
    """The turns of one project before they are placed in sessions."""

    project: Project
    rng: random.Random
    placed: list[Turn] = field(default_factory=list)
    queries: list[tuple[str, list[Turn], str]] = field(default_factory=list)

    def say(self, text: str, session: int | None = None, speaker: str = "user") -> Turn:
        """A turn in ``session`` (a random one when None)."""
        chosen = self.rng.randrange(SESSIONS) if session is None else session
        turn = Turn(chosen, speaker, text)
        self.placed.append(turn)
        return turn

    def ask(self, question: str, evidence: list[Turn], kind: str) -> None:
        """A query answered by ``evidence``."""
        self.queries.append((question, evidence, kind))


def slots(conv: Conversation, component: Component) -> dict[str, object]:
    """Random slot values for one template instance about ``component``."""
    rng, project = conv.rng, conv.project
    people = rng.sample(PEOPLE, 2)
    hosts = rng.sample(HOSTS, 2)
    other = rng.choice([c for c in project.components if c != component])
    return {
        "c": component.name,
        "cd": component.description,
        "c2": other.name,
        "p": people[0],
        "p2": people[1],
        "h": hosts[0],
        "h2": hosts[1],
        "n": rng.randrange(2, 10),
        "n1": rng.randrange(1, 6),
        "n2": rng.randrange(10, 40),
        "day": rng.choice(WEEKDAYS),
        "region": rng.choice(REGIONS),
        "cust": rng.choice(CUSTOMERS),
        "vendor": rng.choice(VENDORS),
        "chan": rng.choice(CHANNELS),
        "ticket": f"{project.ticket}-{rng.randrange(100, 999)}",
        "table": rng.choice(project.tables),
        "noun": rng.choice(project.nouns),
        "lib": rng.choice(project.libraries)[0],
    }


def in_passing(conv: Conversation, statement: str, values: dict[str, object]) -> str:
    """``statement`` wrapped as a turn that is mostly about something else."""
    lead = conv.rng.choice(LEAD_INS)
    trail = conv.rng.choice(TRAILS).format(**values)
    return lead + statement.format(**values) + trail


def add_facts(conv: Conversation) -> None:
    """Every fact template said of three components, with its near miss."""
    for statement, near_miss, question in FACTS:
        for component in conv.rng.sample(conv.project.components, 3):
            values = slots(conv, component)
            evidence = conv.say(in_passing(conv, statement, values))
            conv.say(in_passing(conv, near_miss, values))
            # Half the questions name the component; the rest say what it does.
            if conv.rng.random() < 0.5:
                values["cd"] = component.name
            conv.ask(question.format(**values), [evidence], "paraphrase")


def add_version_pins(conv: Conversation) -> None:
    """Each library pinned, bumped, maybe rolled back; asked first and now."""
    for name, what, versions in conv.project.libraries:
        component = conv.rng.choice(conv.project.components)
        first, second = sorted(conv.rng.sample(range(SESSIONS), 2))
        start = conv.rng.randrange(len(versions) - 1)
        old, new = versions[start], versions[start + 1]
        pinned = conv.say(
            f"let's pin {name} to {old} for now, newer ones break {component.name}", first
        )
        bumped = conv.say(
            f"{name} {new} fixed the {component.name} problem, I moved the pin from {old} to {new}",
            second,
            "assistant",
        )
        conv.say(f"{name} release notes mention a {component.name} regression", None)
        conv.ask(f"which version of {what} did we lock to originally?", [pinned], "temporal")
        conv.ask(f"what {name} version are we pinned to now?", [bumped], "temporal")


def add_decisions(conv: Conversation) -> None:
    """Decisions changed once or twice; asked for the first, the latest, the one before."""
    for topic, paraphrase, options in DECISIONS:
        component = conv.rng.choice(conv.project.components)
        # Half the questions name the component, so they test which turn is current.
        named = conv.rng.random() < 0.5
        values = {"c": component.name, "cd": component.name if named else component.description}
        name, other_words = topic.format(**values), paraphrase.format(**values)
        order = conv.rng.sample(options, 3)
        sessions = sorted(conv.rng.sample(range(SESSIONS), 3))
        said = [conv.say(f"for {name}, we decided to go with {order[0]}", sessions[0])]
        said.append(
            conv.say(f"changing our mind on {name}: {order[1]} instead of {order[0]}", sessions[1])
        )
        if conv.rng.random() < 0.5:
            said.append(
                conv.say(f"final answer on {name} is {order[2]}, dropping {order[1]}", sessions[2])
            )
        conv.say(f"{order[len(said) % 3]} came up again for {component.name}, no change", None)
        conv.ask(f"what was the original plan for {other_words}?", [said[0]], "temporal")
        conv.ask(f"what did we settle on in the end for {other_words}?", [said[-1]], "temporal")
        conv.ask(
            f"what were we doing about {name} before we switched to {order[len(said) - 1]}?",
            [said[-2]],
            "temporal",
        )


def identifier_variants(conv: Conversation) -> list[tuple[str, str, str, str]]:
    """(identifier, near miss, verbatim question, question in words) for one project."""
    rng, project = conv.rng, conv.project
    found = []
    for _ in range(8):
        verb, noun, noun2 = rng.choice(VERBS), *rng.sample(project.nouns, 2)
        func = f"{verb}_{noun}_{noun2}"
        other_verb = rng.choice([v for v in VERBS if v != verb])
        found.append(
            (
                f"`{func}`",
                f"`{other_verb}_{noun}_{noun2}`",
                func,
                f"where is the code that does the {verb} step for a {noun} {noun2}",
            )
        )
    for _ in range(5):
        component, part = rng.choice(project.components), rng.choice(KEY_PARTS)
        key = f"{component.name}.{rng.choice(project.nouns)}.{part}"
        near = key.rsplit(".", 1)[0] + "." + rng.choice([k for k in KEY_PARTS if k != part])
        words = part.replace("_", " ")
        found.append(
            (
                f"`{key}`",
                f"`{near}`",
                key,
                f"which setting controls the {words} of {component.description}",
            )
        )
    for _ in range(4):
        component, part = rng.choice(project.components), rng.choice(ENV_PARTS)
        env = f"{component.name.upper()}_{part}"
        near = f"{component.name.upper()}_{rng.choice([e for e in ENV_PARTS if e != part])}"
        found.append(
            (
                f"`{env}`",
                f"`{near}`",
                env,
                f"the env var for {component.name} {part.lower().replace('_', ' ')}",
            )
        )
    for _ in range(6):
        number = rng.randrange(1000, 9999)
        ticket, near = (
            f"{project.ticket}-{number}",
            f"{project.ticket}-{number + rng.choice((1, 10, -1))}",
        )
        found.append((ticket, near, ticket, ""))
    return found


def add_identifiers(conv: Conversation) -> None:
    """Identifiers with a near miss each; asked verbatim and, where it has words, in prose."""
    for ident, near, verbatim, prose in identifier_variants(conv):
        values = slots(conv, conv.rng.choice(conv.project.components))
        about = "the {noun} bug in {c}".format(**values)
        evidence = conv.say(f"the fix for {about} went into {ident}, {values['p']} reviewed it")
        conv.say(f"{near} has the same shape but is not involved in {about}")
        conv.say(f"I grepped for {near.strip('`')} across {values['c2']}, nothing else calls it")
        conv.ask(verbatim, [evidence], "identifier")
        if prose:
            conv.ask(prose, [evidence], "identifier")


def add_errors(conv: Conversation) -> None:
    """Each error family hit twice with other values and fixes; asked pasted and described."""
    rng = conv.rng
    for message, described, fixes in ERRORS:
        hits = []
        for fix in fixes:
            component = rng.choice(conv.project.components)
            values = slots(conv, component)
            verb, noun = rng.choice(VERBS), rng.choice(conv.project.nouns)
            values |= {"col": rng.choice(("number", "email", "external_id", "slug", "key"))}
            values |= {"func": f"{verb}_{noun}"}
            text = message.format(**values)
            who = values["p"]
            turn = conv.say(f"{who} hit `{text}` in {component.name}; the fix is to {fix}")
            hits.append((turn, text, described.format(**values)))
        for turn, text, words in hits[: 1 + rng.randrange(2)]:
            conv.ask(f"{text} how do I fix this", [turn], "error")
            conv.ask(f"what did we do last time {words}?", [turn], "error")


def add_tour(conv: Conversation) -> None:
    """The first session's tour: what each component is (near misses for paraphrases)."""
    for component in conv.project.components:
        conv.say(f"quick tour: {component.name} is {component.description}", 0, "assistant")


def add_chatter(conv: Conversation) -> None:
    """Turns that share words with the facts and answer nothing."""
    for session in range(SESSIONS):
        for _ in range(CHATTER_PER_SESSION):
            values = slots(conv, conv.rng.choice(conv.project.components))
            speaker = conv.rng.choice(("user", "assistant"))
            conv.say(conv.rng.choice(CHATTER).format(**values), session, speaker)


def label_turns(conv: Conversation) -> list[Turn]:
    """Order turns by session (shuffled within one) and give each its label."""
    by_session: dict[int, list[Turn]] = {}
    for turn in conv.placed:
        by_session.setdefault(turn.session, []).append(turn)
    ordered = []
    for session in sorted(by_session):
        turns = by_session[session]
        conv.rng.shuffle(turns)
        for index, turn in enumerate(turns, 1):
            turn.label = f"s{session + 1:02d}-t{index:02d}"
            ordered.append(turn)
    return ordered


def session_day(session: int) -> date:
    """The date of a session: two or three working days apart."""
    return START + timedelta(days=session * 3 + session // 2)


def build() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """The memories and queries of the whole set, deterministically."""
    rng = random.Random(SEED)
    memories: list[dict[str, object]] = []
    queries: list[dict[str, object]] = []
    for project in PROJECTS:
        conv = Conversation(project, rng)
        for add in (
            add_tour,
            add_facts,
            add_version_pins,
            add_decisions,
            add_identifiers,
            add_errors,
            add_chatter,
        ):
            add(conv)
        for turn in label_turns(conv):
            day = session_day(turn.session).isoformat()
            content = f"[{day}, session {turn.session + 1}] {turn.speaker}: {turn.text}"
            memories.append({"label": turn.label, "content": content, "store": project.store})
        for question, evidence, kind in conv.queries:
            relevant = [turn.label for turn in evidence]
            queries.append(
                {"query": question, "store": project.store, "relevant": relevant, "kind": kind}
            )
    return memories, queries


def as_jsonl(rows: Sequence[dict[str, object]]) -> str:
    """One JSON object a line, keys in the order given."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def files() -> dict[str, str]:
    """File name -> text of the generated set."""
    memories, queries = build()
    return {"memories.jsonl": as_jsonl(memories), "queries.jsonl": as_jsonl(queries)}


def main(argv: Sequence[str] | None = None) -> int:
    """Write the set, or with --check report whether the committed files are current."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the files differ")
    parser.add_argument("--out", type=Path, default=FOLDER, help="folder to write to")
    args = parser.parse_args(argv)
    stale = []
    for name, text in files().items():
        path = args.out / name
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"stale: {', '.join(stale)}; run uv run python bench/conversation_set.py")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
