"""The flows: one module per thing a user does (commands and buttons), each built with
one :class:`~bot.flows.context.FlowContext`; none imports another. :class:`Flows` builds
them all and the button router over them, and registers them with PTB."""

from __future__ import annotations

from dataclasses import dataclass

from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    MessageHandler,
    filters,
)

from durak.service import GameService

from ..screens.presenter import Presenter
from .context import FlowContext
from .info import Info
from .leaving import Leaving
from .lifecycle import Lifecycle
from .lobby import Lobbies
from .play import Play
from .router import Buttons
from .settings_menu import SettingsMenu
from .skip import Skips


@dataclass(slots=True)
class Flows:
    ctx: FlowContext
    lobbies: Lobbies
    play: Play
    info: Info
    settings: SettingsMenu
    leaving: Leaving
    lifecycle: Lifecycle
    skips: Skips
    buttons: Buttons

    @classmethod
    def build(cls, service: GameService, presenter: Presenter) -> Flows:
        ctx = FlowContext(service, presenter)
        lobbies, play, settings = Lobbies(ctx), Play(ctx), SettingsMenu(ctx)
        leaving, lifecycle, skips = Leaving(ctx), Lifecycle(ctx), Skips(ctx)
        buttons = Buttons(
            ctx,
            lobbies=lobbies,
            play=play,
            settings=settings,
            lifecycle=lifecycle,
            leaving=leaving,
            skips=skips,
        )
        return cls(ctx, lobbies, play, Info(ctx), settings, leaving, lifecycle, skips, buttons)

    @property
    def repeat_window(self) -> float:
        """Seconds in which a member's same informing command is answered once."""
        return self.ctx.repeat_window

    @repeat_window.setter
    def repeat_window(self, seconds: float) -> None:
        self.ctx.repeat_window = seconds

    def register(self, app: Application) -> None:  # type: ignore[type-arg]
        local, once = self.ctx.localized, self.ctx.once_a_minute
        lobbies, info, life = self.lobbies, self.info, self.lifecycle
        # Presses first: most updates are presses, and PTB asks each handler in turn
        # whether it takes the update (no command handler takes a press, nor this one a
        # message, so the order decides nothing else)
        app.add_handler(CallbackQueryHandler(local(self.buttons.button)))
        app.add_handler(CommandHandler(["newgame", "durak"], local(lobbies.newgame)))
        # commands that only inform: a flood is answered once
        app.add_handler(CommandHandler("start", local(once("start", lobbies.start))))
        app.add_handler(CommandHandler("help", local(once("help", info.help))))
        app.add_handler(CommandHandler("rules", local(once("rules", info.rules))))
        app.add_handler(CommandHandler("stats", local(once("stats", info.stats))))
        app.add_handler(CommandHandler("leave", local(self.leaving.leave)))
        app.add_handler(CommandHandler("notify_me", local(lobbies.notify_me)))
        app.add_handler(CommandHandler("settings", local(self.settings.settings)))
        app.add_handler(CommandHandler("cancel", local(life.cancel)))
        app.add_handler(CommandHandler("kick", local(life.kick)))
        app.add_handler(CommandHandler("skip", local(self.skips.command)))  # capped in Skips
        app.add_handler(CommandHandler("history", local(once("history", life.history))))
        app.add_handler(CommandHandler("language", local(once("language", life.language_menu))))
        app.add_handler(ChatMemberHandler(life.membership, ChatMemberHandler.MY_CHAT_MEMBER))
        app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, life.migrated))
        app.add_error_handler(self.buttons.error)
