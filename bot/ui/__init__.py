"""The pure UI: values in, HTML and buttons out (callback codec, render, keyboards, texts, i18n)."""
