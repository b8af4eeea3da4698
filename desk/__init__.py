"""The support-staff desk: the case store (`desk.cases`: SQLite, retention, links, staff notes) and batch
triage (`desk.triage`: an inbox of submissions diagnosed in one go, listed and exported for staff).

It stands over the facade (`doctor`) and is used by the app and the CLI; nothing below it imports it.
"""
