"""The bot's translations: one ``<lang>/LC_MESSAGES/durak.po`` per language, and
the tools that keep them in step with the source (``python -m bot.locales``)."""
