"""Import and export dialogs and the File menu entries that open them."""
