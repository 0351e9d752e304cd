"""The daily TIL with the embedded provider: a day of 200 real-text cards, time per step, and the GUI
event-loop lag while it runs beside an open window."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QEventLoop, QTimer

from bench.common import LagMeter, Row, qt_app, temporary_data_dir
from san_desktop.app import SanApp
from san_desktop.bootstrap import start_backend
from san_desktop.core.enums import JobPool, JobStatus, JobType
from san_desktop.jobs.executor import JobExecutor
from san_desktop.jobs.processors import build_registry
from san_desktop.jobs.registry import JobProgress
from san_desktop.queue.records import JobEvent

CARDS = 200


def real_texts(count: int) -> list[str]:
    """Docstring paragraphs of the installed packages (real technical prose), plus Korean notes."""
    import importlib
    import inspect

    texts: list[str] = []
    modules = (
        "sqlalchemy.orm.session", "sqlalchemy.engine.base", "sqlalchemy.orm.query", "sqlalchemy.sql.elements",
        "sqlalchemy.sql.selectable", "httpx._client", "alembic.command", "json", "argparse", "logging",
    )  # fmt: skip
    for name in modules:
        module = importlib.import_module(name)
        for _name, item in inspect.getmembers(module):
            doc = inspect.getdoc(item) or ""
            for paragraph in doc.split("\n\n"):
                if 200 <= len(paragraph) <= 1500 and paragraph not in texts:
                    texts.append(paragraph)
    korean = [
        "리액트 훅은 함수 컴포넌트에서 상태와 생명주기를 다루게 해 준다. useEffect는 렌더링 뒤에 실행된다.",
        "트랜잭션 격리 수준이 높을수록 동시성은 낮아진다. 직렬화 가능 격리는 팬텀 읽기를 막는다.",
        "쿠버네티스 파드는 하나 이상의 컨테이너를 묶는 가장 작은 배포 단위다.",
    ]
    texts += [f"{line} ({n})" for n in range(20) for line in korean]
    return texts[:count]


def _prepare(directory: Path) -> SanApp:
    app = SanApp(start_backend(directory, kind="gui", log_to_stderr=False))
    for text in real_texts(CARDS):
        app.capture_text(text)
    JobExecutor(
        app.queue, build_registry(app.services, app.providers), app.backend.require_session(), breakers={}
    ).drain(JobPool.AI)
    return app


def bench_til_steps() -> list[Row]:
    with temporary_data_dir() as directory:
        app = _prepare(directory)
        try:
            day = app.til.today()
            cards = len(app.til.collect(day)[0])
            marks: list[tuple[str, float]] = []
            executor = JobExecutor(
                app.queue,
                build_registry(app.services, app.providers),
                app.backend.require_session(),
                breakers={},
                on_progress=lambda p: marks.append((p.step, time.perf_counter())),
            )
            job = app.generate_til(day).value
            start = time.perf_counter()
            claim = app.queue.claim_next(app.backend.require_session(), JobPool.AI, {JobType.TIL_GENERATION})
            assert claim is not None
            executor.run(claim)
            end = time.perf_counter()
            assert app.queue.get(job.id).status is JobStatus.COMPLETED
        finally:
            app.close()
    steps = [(name, (marks[i + 1][1] if i + 1 < len(marks) else end) - at) for i, (name, at) in enumerate(marks)]
    detail = ", ".join(f"{name} {seconds * 1000:.0f} ms" for name, seconds in steps)
    return [Row(f"TIL of a day of {cards} cards, embedded provider", (end - start) * 1000, "ms", detail)]


def bench_til_gui_lag() -> list[Row]:
    from san_desktop.ui.common.context import build_context, freeze_startup_objects
    from san_desktop.ui.main_window import MainWindow

    qt = qt_app()
    with temporary_data_dir() as directory:
        app = _prepare(directory)
        context = build_context(app)
        window = MainWindow(context)
        window.show_page("til")
        window.show()
        context.start()
        freeze_startup_objects()  # as san-desktop does once its window is up
        lag = LagMeter()
        done: list[JobProgress] = []
        context.runner.job_progress.connect(done.append)
        completed: set[str] = set()
        loop = QEventLoop()

        def on_changed(event: JobEvent) -> None:  # the window's own way to learn it: a signal, no polling
            if event.new_status is JobStatus.COMPLETED:
                completed.add(event.job_id)
                if job.id in completed:
                    QTimer.singleShot(200, loop.quit)  # the page shows the result meanwhile

        context.runner.job_changed.connect(on_changed)
        job = app.generate_til(app.til.today()).value
        lag.start()
        give_up = QTimer()
        give_up.setSingleShot(True)
        give_up.timeout.connect(loop.quit)
        give_up.start(120_000)
        if job.id in completed:  # (it can finish before the loop runs; the page still shows it)
            QTimer.singleShot(200, loop.quit)
        loop.exec()
        give_up.stop()
        lag.stop()
        window.close()
        qt.processEvents()
    return [lag.row("GUI event-loop lag while a 200-card TIL is made, worst", "TIL page open")]


def run_all() -> list[Row]:
    return bench_til_steps() + bench_til_gui_lag()
