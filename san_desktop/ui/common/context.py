"""What the window works with, built once at start-up (and by tests): the facade, the job runner, the
change hub and the background operations. The UI reaches data only through ``app``, off the GUI thread."""

from __future__ import annotations

import gc
import logging
from dataclasses import dataclass

from PySide6.QtCore import QObject

from san_desktop.app import Changes, SanApp
from san_desktop.core.settings import Settings
from san_desktop.jobs.registry import ProcessorRegistry
from san_desktop.jobs.runner import JobRunner
from san_desktop.queue.records import BulkResult
from san_desktop.ui.common.hub import POLL_MS, ChangeHub
from san_desktop.ui.common.ops import Ops

log = logging.getLogger(__name__)


@dataclass
class AppContext:
    app: SanApp
    runner: JobRunner
    hub: ChangeHub
    ops: Ops
    ai_failure: str | None = None  # why the embedded AI works in the window's process (its own did not start)
    stopped_cleanly: bool | None = None  # after ``shutdown``: whether every background thread had ended

    @property
    def settings(self) -> Settings:
        return self.app.settings

    def start(self, poll_ms: int = POLL_MS) -> None:
        """Run the background operations held until now (the pages' first reads), start the runner (its
        recovery sweep first), watch for other processes' changes, and load the sentence encoder, then
        the similar-card index and the article extractor, off the GUI thread."""
        self.ops.release()
        self.runner.start()
        self.hub.watch(self.app, self.ops, poll_ms)
        self.ops.run(self.app.warm_up_encoder, self._on_encoder_warmed_up)

    def _on_encoder_warmed_up(self, failure: str | None) -> None:
        if failure is not None:
            self.hub.message.emit(failure)  # once: the model is not tried again in this process
        model = self.app.providers.embedding_model()  # the encoder's space, or the n-grams' without it
        self.ops.run(lambda: self.app.cards.warm_up(model), lambda n: log.info("Similar-card index ready (%d)", n))
        self.ops.run(self.app.warm_up_extractor)  # for the first link or page from the browser
        self.ops.run(self.app.warm_up_ai, self._on_ai_warmed_up)  # the embedded AI's process, for the first card

    def _on_ai_warmed_up(self, failure: str | None) -> None:
        self.ai_failure = failure
        if failure is not None:
            self.hub.message.emit(failure)

    def on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        """New settings (saved here or by another program) take effect in the runner at once."""
        if not changes.settings:
            return
        settings = self.app.settings
        self.runner.apply_settings(
            settings.jobs, ai_changed=changes.ai_settings_changed, ai_threads=settings.ai_threads_with_window
        )
        if changes.embedding_model_changed:
            self.runner.run_sweep_now()  # its hook re-embeds cards of the old model, through jobs
        if changes.ai_settings_changed:
            self.ops.write(self.app.retry_ai_server_failures, self._on_ai_server_failures_retried)

    def _on_ai_server_failures_retried(self, result: BulkResult) -> None:
        if result.count:
            self.hub.message.emit(f"New AI settings: {result.count} job(s) the AI server had failed run again.")

    def shutdown(self) -> bool:
        """Stop watching, the runner (its jobs given back to the queue, a few seconds at most) and the background
        operations (idempotent). False when some thread still runs then (a call that could not be cut short): the
        process must end without waiting for it (``stopped_cleanly``)."""
        if self.stopped_cleanly is None:
            self.hub.stop()
            runner_stopped = self.runner.shutdown()
            ops_stopped = self.ops.shutdown()
            self.stopped_cleanly = ops_stopped and runner_stopped
        return self.stopped_cleanly


def build_context(
    app: SanApp,
    registry: ProcessorRegistry | None = None,
    parent: QObject | None = None,
    *,
    runner: JobRunner | None = None,
    ai_in_own_process: bool = False,
) -> AppContext:
    """The window's context around ``app``: a job runner with the product's processors (or the given
    ``runner``), the change hub and the background operations, wired together. ``ai_in_own_process``: the
    embedded provider computes in a child process, as in the app (``ai.own_process``; tests mostly keep it
    in-process, where they can stand in for it)."""
    if ai_in_own_process:
        app.providers.compute_in_own_process()
    if runner is None:
        session = app.backend.require_session()
        runner = JobRunner(
            app.queue,
            registry or product_registry(app),
            session,
            app.settings.jobs,
            parent,
            ai_threads=app.settings.ai_threads_with_window,
        )
    hub = ChangeHub(parent, runner.outage)  # the server's absence is said once for both
    ops = Ops(hub, parent, unreachable=app.unreachable)  # the server away: a sentence, not a crash
    hub.follow(runner)
    context = AppContext(app, runner, hub, ops)
    hub.changed.connect(context.on_hub_changed)
    return context


def product_registry(app: SanApp) -> ProcessorRegistry:
    """The product's processors around ``app``, imported and built by the runner's first sweep (off the
    GUI thread, after the window is shown)."""

    def build() -> ProcessorRegistry:
        from san_desktop.jobs.processors import registry_for

        return registry_for(app)

    return ProcessorRegistry.deferred(build)


def freeze_startup_objects() -> None:
    """Take what start-up made (modules, SQLAlchemy's registries, the window) out of the garbage collector's
    reach, so that a full collection scans only newer objects: unfrozen, each full collection paused every
    thread, the window included, long enough to be seen (while a TIL is made)."""
    gc.freeze()
