"""The job monitor's pool bar: what the AI and GitHub pools do now, with Pause / Resume (remembered in
the settings) and "Try now" when failures paused the AI pool, its countdown live."""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from san_desktop.core.enums import POOL_NAMES, JobPool
from san_desktop.jobs.runner import JobRunner, PoolState, PoolStatus
from san_desktop.ui.common.look import tone_style

PAUSED_STYLE = "error"  # the tone of a paused pool


class PoolBar(QWidget):
    """Signals:
    pause_requested(object, bool): a pool and whether it should be paused (True) or resumed.
    """

    pause_requested = Signal(object, bool)

    def __init__(self, runner: JobRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self.labels: dict[JobPool, QLabel] = {}
        self.pause_buttons: dict[JobPool, QPushButton] = {}
        self.try_now_button = QPushButton("Try now")
        self.try_now_button.setToolTip("Let the paused AI jobs run now instead of waiting for the pause to end")
        self.try_now_button.setVisible(False)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for pool in POOL_NAMES:
            label = QLabel()
            button = QPushButton()
            button.setProperty("pool", pool.value)
            button.clicked.connect(self._on_pause_button_clicked)
            self.labels[pool], self.pause_buttons[pool] = label, button
            layout.addWidget(label)
            layout.addWidget(button)
            if pool is JobPool.AI:
                layout.addWidget(self.try_now_button)
            layout.addSpacing(12)
        layout.addStretch(1)
        self._ticker = QTimer(self)  # running / idle and the breaker's countdown, while shown
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self.refresh)
        self.try_now_button.clicked.connect(self._on_try_now_button_clicked)
        runner.pools_changed.connect(self.refresh)
        self.refresh()

    def status(self, pool: JobPool) -> PoolStatus:
        return self._runner.pool_status(pool)

    def refresh(self) -> None:
        for pool, name in POOL_NAMES.items():
            status = self._runner.pool_status(pool)
            label = self.labels[pool]
            label.setText(f"{name} jobs: {status.describe()}")
            paused = status.state in (PoolState.PAUSED_BY_USER, PoolState.PAUSED_BY_BREAKER)
            label.setStyleSheet(tone_style(PAUSED_STYLE) if paused else "")
            user_paused = self._runner.settings.paused(pool)
            button = self.pause_buttons[pool]
            button.setText("Resume" if user_paused else "Pause")
            button.setToolTip(
                f"Start {name} jobs again" if user_paused else f"Start no new {name} jobs (running ones finish)"
            )
            if pool is JobPool.AI:
                self.try_now_button.setVisible(status.state is PoolState.PAUSED_BY_BREAKER)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()
        self._ticker.start()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._ticker.stop()

    # --- slots --------------------------------------------------------------------------------

    def _on_pause_button_clicked(self) -> None:
        pool = JobPool(str(self.sender().property("pool")))
        self.pause_requested.emit(pool, not self._runner.settings.paused(pool))

    def _on_try_now_button_clicked(self) -> None:
        self._runner.try_now(JobPool.AI)
        self.refresh()
