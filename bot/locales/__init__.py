"""The bot's translations: one ``<lang>/LC_MESSAGES/durak.po`` per language, kept
in step with the source by Babel (``python -m bot.locales``)."""
