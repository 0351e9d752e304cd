"""What other processes and machines changed in the library (the command line beside an open window, another
machine on a server's library): their change notices, read by a poll or told by the server as they commit, and
the settings they saved (``SettingsSync.reload``). The window's change hub polls this, and the data folder's
watcher makes it poll at once."""

from __future__ import annotations

from san_desktop.db.changes import CARD_NOTICE, ChangeLog
from san_desktop.db.database import CHANGES_CHANNEL, Database, Notified
from san_desktop.services.changes import MANY_CHANGED, Changes
from san_desktop.services.scraps import SCRAP_NOTICE
from san_desktop.services.settings_sync import SettingsSync


class OtherProcesses:
    """Reads other processes' change notices from where the last read stopped (at first: the newest now)."""

    def __init__(self, db: Database, changelog: ChangeLog, settings: SettingsSync) -> None:
        self.db = db
        self.changelog = changelog
        self.settings = settings
        with db.engine.connect() as connection:
            self._cursor = changelog.newest_id(connection)

    def watch(self, callback: Notified) -> bool:
        """Call ``callback`` (from another thread) when another process or machine wrote change notices: ``poll``
        has news then. False when nothing will call (a SQLite library: poll)."""
        return self.db.listen(CHANGES_CHANNEL, callback)

    def unwatch(self, callback: Notified) -> None:
        self.db.unlisten(CHANGES_CHANNEL, callback)

    @property
    def told(self) -> bool:
        """Whether other processes' change notices are being told now (``watch``'s calls come)."""
        return self.db.notified

    def poll(self) -> Changes:
        """What other processes changed since the last poll: scraps (from their notices) and settings."""
        with self.db.sessions() as session:
            self._cursor, notices = self.changelog.since(session, self._cursor)
        scraps = frozenset(item for kind, item in notices if kind == SCRAP_NOTICE)
        cards = frozenset(item for kind, item in notices if kind == CARD_NOTICE)  # their scraps
        if len(scraps | cards) > MANY_CHANGED:  # an import beside the window: pages read what they show again
            return Changes(library=True, external=True) | self.settings.reload()
        changes = Changes(scraps=scraps | cards, cards_of_scraps=cards, external=bool(scraps or cards))
        return changes | self.settings.reload()
