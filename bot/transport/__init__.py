"""The Telegram transport: the Bot API client, updates in (polling or webhook),
the outbox out. It knows no game."""
