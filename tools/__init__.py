"""Project tooling that is not part of the app: the custom import-linter contract for app.py."""
