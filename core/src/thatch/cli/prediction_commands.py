"""Handlers of ``thatch predictions``: query, update, list, show, delete, import, calibration."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from thatch.api import Thatch
from thatch.cli import output
from thatch.cli.inputs import answer_stdin_queries, batches, count_checked, open_import_file
from thatch.cli.memory_commands import connect
from thatch.decisions.calibration import CalibrationReport, reliability_rows
from thatch.decisions.engine import UpdateResult
from thatch.decisions.nudge import format_block
from thatch.decisions.service import PredictionDetail, parse_update_calls
from thatch.plugin.decisions import Prediction
from thatch.plugin.errors import InvalidInputError
from thatch.result_json import prediction_hit_data
from thatch.serialize import to_json_data


def query(args: argparse.Namespace) -> int:
    with connect(args) as th:
        if args.context == "-":
            return _query_stdin(th, args)
        hits = th.decisions.query(
            args.context,
            stores=args.store,
            limit=args.limit,
            session=args.session,
            record=args.session is not None,
        )
    if args.json:
        output.print_json([prediction_hit_data(hit) for hit in hits])
    elif hits:
        output.say(format_block(hits))
    else:
        output.note("no predictions fit this context")
    return 0


def _query_stdin(th: Thatch, args: argparse.Namespace) -> int:
    def answer(context: str, store: str | None, limit: int) -> tuple[Sequence[str], list[Any]]:
        hits = th.decisions.query(context, stores=store, limit=limit)
        return th.stores_for(store), [prediction_hit_data(hit) for hit in hits]

    return answer_stdin_queries(answer, args.store, args.limit)


def _describe_update(result: UpdateResult, given: str) -> str:
    prediction = result.prediction
    described = (
        f"{result.outcome}: prediction {prediction.id} in {prediction.store} "
        f"(confidence {prediction.confidence:.4f}, evidence {prediction.evidence:g}; "
        f"matcher {result.matcher.id}{' new' if result.matcher_created else ''})"
    )
    if not result.prediction_created and " ".join(given.split()) != prediction.statement:
        # Say which wording the feedback landed on, so a wrong merge is visible.
        described += f"\n  recorded on the existing statement: {prediction.statement!r}"
    similar = result.similar
    if similar is not None:
        # Kept apart, not merged silently: name it so the user can link it by id.
        described += (
            f"\n  similar: prediction {similar.prediction.id} (cosine {similar.cosine:.4f}) "
            f"{similar.prediction.statement!r}, not linked: {similar.reason}"
            f"\n  if the user meant that one, run again with --prediction-id "
            f"{similar.prediction.id}"
        )
    return described


def update(args: argparse.Namespace) -> int:
    prediction_id = args.prediction_id
    if args.prediction is None and prediction_id is None:
        raise InvalidInputError(
            "give --prediction (what the user decides) or --prediction-id (an existing one)"
        )
    if args.prediction is not None and prediction_id is not None:
        raise InvalidInputError(
            f"--prediction and --prediction-id {prediction_id} exclude each other: give "
            f"--prediction-id {prediction_id} alone to record on that prediction, or "
            "--prediction TEXT alone to record a statement"
        )
    with connect(args) as th:
        result = th.decisions.update(
            args.matcher,
            args.prediction or "",
            args.signal,
            rationale=args.rationale or "",
            store=args.store,
            detail=args.detail or "",
            session=args.session,
            prediction_id=prediction_id,
        )
    if args.json:
        output.print_json(
            {**to_json_data(result), "confidence": result.confidence, "evidence": result.evidence}
        )
    else:
        output.say(_describe_update(result, args.prediction or ""))
    return 0


def list_predictions(args: argparse.Namespace) -> int:
    with connect(args) as th:
        predictions = th.decisions.list(args.store)
    return output.emit(args.json, predictions, _print_predictions)


def _print_predictions(predictions: list[Prediction]) -> None:
    if not predictions:
        output.note("no predictions yet: record one with 'thatch predictions update'")
    rows = [
        (
            str(p.id),
            p.store,
            f"{p.confidence:.2f}",
            f"{p.evidence:g}",
            output.shorten(p.statement, 60),
        )
        for p in predictions
    ]
    output.print_table(rows, ("ID", "STORE", "CONF", "EVIDENCE", "PREDICTION"))


def show(args: argparse.Namespace) -> int:
    with connect(args) as th:
        detail = th.decisions.show(args.id)
    return output.emit(args.json, detail, _print_detail)


def _print_detail(detail: PredictionDetail) -> None:
    p = detail.prediction
    output.say(f"prediction {p.id} in {p.store}: {p.statement}")
    if p.rationale:
        output.say(f"rationale:  {p.rationale}")
    output.say(
        f"confidence: {p.confidence:.4f} (confirm {p.confirm_count:g}, "
        f"disconfirm {p.disconfirm_count:g}, prior {p.prior:.4f})"
    )
    output.say("when:")
    for matcher, edge in detail.matchers:
        output.say(f"  - [{edge.weight:.2f}] {matcher.description} (matcher {matcher.id})")
    output.say("provenance:")
    for entry in detail.provenance:
        said = f": {entry.detail}" if entry.detail else ""
        output.say(f"  {entry.created_at:%Y-%m-%d %H:%M} {entry.signal}{said}")


def delete(args: argparse.Namespace) -> int:
    with connect(args) as th:
        deleted = th.decisions.delete(args.id)
    if args.json:
        output.print_json(deleted)
    else:
        output.say(f"deleted prediction {deleted.id} ({output.shorten(deleted.statement, 60)})")
    return 0


#: Update calls replayed per batch: an import holds this many, whatever the file's size.
IMPORT_BATCH = 512


def import_file(args: argparse.Namespace) -> int:
    counts: dict[str, int] = {}
    with open_import_file(args.file) as source:
        # Every line is parsed and checked before any is replayed: a bad line changes nothing.
        count_checked(parse_update_calls(source.lines(), source.name))
        calls = parse_update_calls(source.lines(), source.name)
        with connect(args) as th:
            # An id must name a prediction of its store before anything is replayed.
            th.decisions.check_ids(parse_update_calls(source.lines(), source.name), source.name)
            for batch in batches(calls, IMPORT_BATCH):
                for result in th.decisions.import_calls(batch):
                    counts[result.outcome] = counts.get(result.outcome, 0) + 1
    replayed = sum(counts.values())
    if args.json:
        output.print_json({"calls": replayed, **counts})
    else:
        summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())) or "nothing"
        output.say(f"imported {replayed} update calls: {summary}")
    return 0


def calibration(args: argparse.Namespace) -> int:
    with connect(args) as th:
        report = th.decisions.calibration(args.store or "all")
    if args.plot:
        from thatch.decisions.plot import draw_reliability

        try:
            draw_reliability(report, args.plot)
        except InvalidInputError as exc:
            raise InvalidInputError(f"--plot: {exc}") from None
        output.note(f"reliability diagram written to {args.plot}")
    if args.json:
        output.print_json(report)
    else:
        _print_report(report)
    return 0


def _print_report(report: CalibrationReport) -> None:
    brier = "n/a (no scored showings yet)" if report.brier is None else f"{report.brier:.4f}"
    print(f"showings: {report.showings}, scored: {report.scored}, Brier score: {brier}")
    output.print_table(
        reliability_rows(report), ("CONFIDENCE", "SHOWINGS", "MEAN CONF", "MEAN OUTCOME")
    )
