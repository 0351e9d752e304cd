"""Run as ``python -m tests.support.review_window_geometry`` (on the screen its environment gives Qt): opens
a TIL's review window on a new data directory (``SAN_DATA_DIR``), committing to a local repository made
beside it, and prints, as JSON, the screen's available area, the window's frame and its size once shown."""

from __future__ import annotations

import json
import sys
from dataclasses import replace


def main() -> int:
    from PySide6.QtCore import QEventLoop, QRect
    from PySide6.QtWidgets import QApplication

    from san_desktop.app import open_app
    from san_desktop.core.settings import GitHubSettings
    from san_desktop.ui.common.context import build_context
    from san_desktop.ui.til.review import TilReviewWindow
    from tests.support.git_repo import user_repository
    from tests.support.til import finished_til

    qt = QApplication(sys.argv[:1])
    with open_app(None, kind="gui", log_to_stderr=False) as app:
        notes = user_repository(app.data_dir.parent / "notes")
        github = GitHubSettings(target="local", local_repository=str(notes))
        app.save_settings(replace(app.settings, github=github))
        day = finished_til(app)
        context = build_context(app)
        window = TilReviewWindow(context, day)
        window.show()
        while not window.commit.path.text():  # its text and plan are shown: laid out as a user sees it
            qt.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
        qt.processEvents()

        def rect(r: QRect) -> list[int]:
            return [r.x(), r.y(), r.width(), r.height()]

        screen = window.screen()
        size = [window.width(), window.height()]
        print(
            json.dumps(
                {"available": rect(screen.availableGeometry()), "frame": rect(window.frameGeometry()), "size": size}
            )
        )
        window.close()
        context.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
