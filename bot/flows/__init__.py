"""The flows: one module per thing a user does (commands and buttons)."""
