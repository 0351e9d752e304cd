"""The job monitor's list and its details pane: the jobs as a table whose columns fit the page (long
targets and errors cut at a word), and the selected job's error chain and attempts, read off the GUI
thread and copyable for a bug report."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtWidgets import QAbstractItemView, QApplication, QTableView, QTextBrowser, QWidget

from san_desktop.queue.records import AttemptRecord, JobRecord
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.table_fit import Column, ColumnFitter, WordElideDelegate
from san_desktop.ui.jobs.report import details_html, details_text
from san_desktop.ui.jobs.table_model import JobTableModel, status_text

TYPE, TARGET, STATUS, ATTEMPTS, UPDATED, ERROR = range(6)


class JobTable(QTableView):
    """Jobs, several selectable at once. No signals of its own."""

    def __init__(self, model: JobTableModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(22)
        self.elide = WordElideDelegate(self)
        for column in (TYPE, TARGET, STATUS, ERROR):
            self.setItemDelegateForColumn(column, self.elide)
        self.columns = ColumnFitter(
            self,
            {
                TYPE: Column(sample="Star recommendations"),
                TARGET: Column(0.28, 120),
                STATUS: Column(0.22, 110),
                ATTEMPTS: Column(sample="10"),
                UPDATED: Column(sample="2000-12-31 23:59:59"),
                ERROR: Column(0.35, 100),
            },
        )


class JobDetails(QTextBrowser):
    """The selected jobs: one job in full (its error chain and every attempt), several by state.
    No signals of its own."""

    def __init__(
        self,
        context: AppContext,
        model: JobTableModel,
        selected_job: Callable[[], JobRecord | None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._context = context
        self._model = model
        self._selected_job = selected_job  # asked again when attempts arrive: still the one selected?
        self.setOpenLinks(False)
        self.setPlaceholderText("Select a job to see its errors and attempts.")

    def show_jobs(self, jobs: list[JobRecord]) -> None:
        if not jobs:
            self.clear()
            return
        if len(jobs) > 1:
            states: dict[str, int] = {}
            for job in jobs:
                states[job.status.value.lower()] = states.get(job.status.value.lower(), 0) + 1
            parts = ", ".join(f"{count} {state}" for state, count in sorted(states.items()))
            self.setHtml(f"<p><b>{len(jobs)} jobs selected</b>: {html.escape(parts)}.</p>")
            return
        job = jobs[0]

        def loaded(attempts: list[AttemptRecord]) -> None:
            current = self._selected_job()
            if current is not None and current.id == job.id:
                label = self._model.target_label(current)
                progress = self._model.progress_of(current.id)
                self.setHtml(details_html(current, label, attempts, status_text(current, progress=progress)))

        self._context.ops.run(lambda: self._context.app.queue.attempts(job.id), loaded)

    def copy_job(self, job: JobRecord, copied: Callable[[str], None]) -> None:
        """Put ``job`` with its whole attempt history on the clipboard; ``copied`` says so."""
        label = self._model.target_label(job)

        def loaded(attempts: list[AttemptRecord]) -> None:
            QApplication.clipboard().setText(details_text(job, label, attempts))
            copied(f"Details of job {job.id} copied: paste them into a bug report.")

        self._context.ops.run(lambda: self._context.app.queue.attempts(job.id), loaded)
