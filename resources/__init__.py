"""Icons, styles and the desktop entry (installed as ``san_desktop.resources``)."""
