"""The Qt front end: windows, dialogs and item models. Talks to services and the job runner only."""
