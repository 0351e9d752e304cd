"""A job with its attempt history, as the monitor's detail pane shows it (HTML: sentences, without
exception names) and as "Copy details" puts it on the clipboard for a bug report (plain text: the recorded
chain with the names of foreign exceptions, every traceback). Error texts are stored redacted already."""

from __future__ import annotations

import html

from san_desktop import __version__
from san_desktop.core.redact import first_cause, readable_parts, traceback_cause
from san_desktop.queue.records import AttemptRecord, JobRecord
from san_desktop.ui.jobs.table_model import local_time, type_label


def _facts(job: JobRecord, target: str, status: str) -> list[tuple[str, str]]:
    return [
        ("Job", job.id),
        ("Type", f"{type_label(job)} ({job.job_type.value})"),
        ("Target", f"{target} ({job.target_id})" if target != job.target_id else job.target_id),
        ("Status", status),
        ("Attempts", f"{job.attempts} of {job.max_attempts}"),
        ("Created", local_time(job.created_at)),
        ("Updated", local_time(job.updated_at)),
        ("Error kind", job.error_kind.value.lower() if job.error_kind else "—"),
    ]


def details_html(job: JobRecord, target: str, attempts: list[AttemptRecord], status: str) -> str:
    parts = [
        f"<h3>{html.escape(type_label(job))} — {html.escape(status)}</h3>",
        "<table>",
        *(
            f"<tr><td><b>{label}</b>&nbsp;</td><td>{html.escape(value)}</td></tr>"
            for label, value in _facts(job, target, status)
        ),
        "</table>",
    ]
    if job.error_message:
        chain = "<br>&larr; ".join(html.escape(part) for part in readable_parts(job.error_message))
        parts.append(f"<h4>Error</h4><p>{chain or html.escape(first_cause(job.error_message))}</p>")
    parts.append("<h4>Attempts</h4>")
    if not attempts:
        parts.append("<p>None yet.</p>")
    for attempt in attempts:
        outcome = attempt.outcome.value.lower() if attempt.outcome else "running"
        parts.append(
            f"<p><b>#{attempt.attempt}</b> {html.escape(local_time(attempt.started_at))} — "
            f"{html.escape(outcome)} <small>(run {html.escape(attempt.run_id)})</small></p>"
        )
        if attempt.error_text:
            parts.append(f"<p>{html.escape(traceback_cause(attempt.error_text))}</p>")
    if any(attempt.error_text for attempt in attempts):
        parts.append("<p><small>Copy details puts every attempt's traceback on the clipboard.</small></p>")
    return "".join(parts)


def details_text(job: JobRecord, target: str, attempts: list[AttemptRecord]) -> str:
    """Everything about one job for a bug report: its facts, its error chain, every attempt with its
    traceback (secrets were redacted when they were recorded)."""
    lines = [f"SAN Desktop {__version__} — job report", ""]
    lines += [f"{label + ':':<12}{value}" for label, value in _facts(job, target, job.status.value)]
    if job.error_message:
        lines += ["", "Error:", *(f"  {part}" for part in job.error_message.split(" <- "))]
    lines += ["", f"Attempts ({len(attempts)}):"]
    for attempt in attempts:
        outcome = attempt.outcome.value if attempt.outcome else "RUNNING"
        ended = f", ended {local_time(attempt.ended_at)}" if attempt.ended_at else ""
        lines.append(
            f"  #{attempt.attempt} {outcome} — started {local_time(attempt.started_at)}{ended} "
            f"(pool {attempt.pool.value}, run {attempt.run_id}, session {attempt.session_id})"
        )
        if attempt.error_text:
            lines += [f"    {line}" for line in attempt.error_text.strip().splitlines()]
    return "\n".join(lines) + "\n"
