"""Libraries in and out: imports of notes, bookmarks and highlights, exports to Anki, Markdown and a full
backup."""
