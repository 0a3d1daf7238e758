from tests.fake_telegram.fixtures import aio, fake_telegram, make_fake_telegram

__all__ = ["aio", "fake_telegram", "make_fake_telegram"]
