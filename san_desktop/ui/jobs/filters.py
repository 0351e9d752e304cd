"""The job monitor's filter bar: status buttons with live counts, a job type, a text, and "these jobs"
(the ones a recovery sweep resumed) as a removable chip."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QToolButton,
    QWidget,
)

from san_desktop.core.enums import JOB_STATUS_NAMES, JobStatus
from san_desktop.queue.monitor import JobFilter
from san_desktop.ui.jobs.table_model import JOB_TYPE_LABELS

# (label, statuses): "All" is no status at all
STATUS_CHOICES: tuple[tuple[str, frozenset[JobStatus]], ...] = (
    ("All", frozenset()),
    *(
        (JOB_STATUS_NAMES[status], frozenset({status}))
        for status in (
            JobStatus.PENDING,
            JobStatus.PROCESSING,
            JobStatus.FAILED,
            JobStatus.CANCELLED,
            JobStatus.COMPLETED,
        )
    ),
)
TEXT_DELAY_MS = 250  # typing pauses this long before the list follows


class JobFilterBar(QWidget):
    """Signals:
    changed(object): the new ``JobFilter``, after any part of it changed (typing: once it pauses).
    """

    changed = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._filter = JobFilter()
        self.status_buttons: dict[str, QPushButton] = {}
        self._statuses = QButtonGroup(self)
        self._statuses.setExclusive(True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        for label, _statuses in STATUS_CHOICES:
            button = QPushButton(label)
            button.setCheckable(True)
            button.setFlat(True)
            button.setProperty("label", label)
            self._statuses.addButton(button)
            self.status_buttons[label] = button
            layout.addWidget(button)
        self.status_buttons["All"].setChecked(True)
        layout.addSpacing(8)

        self.type_combo = QComboBox()
        self.type_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.type_combo.setMinimumContentsLength(9)  # the text beside it needs the room more
        self.type_combo.addItem("All types", None)
        for job_type, label in JOB_TYPE_LABELS.items():
            self.type_combo.addItem(label, job_type)
        layout.addWidget(self.type_combo)

        self.text = QLineEdit()
        self.text.setPlaceholderText("Filter by title, error or id (Ctrl+F)")
        self.text.setClearButtonEnabled(True)
        self.text.setMinimumWidth(120)
        layout.addWidget(self.text, 1)

        self.ids_chip = QToolButton()
        self.ids_chip.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.ids_chip.setToolTip("Show all jobs again")
        self.ids_chip.setVisible(False)
        layout.addWidget(self.ids_chip)

        self._typing = QTimer(self)
        self._typing.setSingleShot(True)
        self._typing.setInterval(TEXT_DELAY_MS)
        self._typing.timeout.connect(self._on_typing_timeout)
        self._statuses.buttonClicked.connect(self._on_statuses_button_clicked)
        self.type_combo.currentIndexChanged.connect(self._on_type_combo_current_index_changed)
        self.text.textChanged.connect(self._on_text_text_changed)
        self.ids_chip.clicked.connect(self._on_ids_chip_clicked)

    @property
    def filter(self) -> JobFilter:
        return self._filter

    def set_filter(self, where: JobFilter, *, ids_label: str = "") -> None:
        """Show ``where`` in the bar (without a text of its own it keeps the bar's) and announce it."""
        label = next((label for label, statuses in STATUS_CHOICES if statuses == where.statuses), "All")
        self.status_buttons[label].setChecked(True)
        types = sorted(where.job_types)
        self.type_combo.blockSignals(True)
        self.type_combo.setCurrentIndex(self.type_combo.findData(types[0]) if len(types) == 1 else 0)
        self.type_combo.blockSignals(False)
        self.ids_chip.setText(f"{ids_label or f'{len(where.ids)} chosen jobs'}  ✕")
        self.ids_chip.setVisible(bool(where.ids))
        self._set(where)

    def show_counts(self, counts: dict[JobStatus, int]) -> None:
        """The live count of each status (of the jobs the rest of the filter matches)."""
        for label, statuses in STATUS_CHOICES:
            total = sum(counts.values()) if not statuses else sum(counts.get(status, 0) for status in statuses)
            self.status_buttons[label].setText(f"{label} ({total:,})")

    def clear(self) -> None:
        """Every job again: all statuses and types, no text, no chosen jobs."""
        self.text.blockSignals(True)
        self.text.clear()
        self.text.blockSignals(False)
        self._typing.stop()
        self.ids_chip.setVisible(False)
        self.set_filter(JobFilter())

    def focus_text(self) -> None:
        self.text.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.text.selectAll()

    def _set(self, where: JobFilter) -> None:
        if where != self._filter:
            self._filter = where
            self.changed.emit(where)

    # --- slots --------------------------------------------------------------------------------

    def _on_statuses_button_clicked(self, button: QPushButton) -> None:
        statuses = dict(STATUS_CHOICES)[str(button.property("label"))]
        self._set(replace(self._filter, statuses=statuses))

    def _on_type_combo_current_index_changed(self, _index: int) -> None:
        job_type = self.type_combo.currentData()
        self._set(replace(self._filter, job_types=frozenset({job_type}) if job_type else frozenset()))

    def _on_text_text_changed(self, _text: str) -> None:
        self._typing.start()

    def _on_typing_timeout(self) -> None:
        self._set(replace(self._filter, text=self.text.text().strip()))

    def _on_ids_chip_clicked(self) -> None:
        self.ids_chip.setVisible(False)
        self._set(replace(self._filter, ids=frozenset()))
