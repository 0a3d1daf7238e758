"""The group's memory as text: /stats (the rating table, fools of the week and month,
the longest run), /stats @name (head-to-head and achievements), the end message's
recap, /history's rating changes, and what /leave costs. Pure; every text in the
reader's language. A group message stays within Telegram's 4,096 characters: long
names are shortened, and past that the table's tail is summed up in one line."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from durak import Game
from durak.service import (
    CHAIN,
    FIRST_WIN,
    HARD_AI,
    SIX,
    STREAK_5,
    Fools,
    GameRatings,
    GroupStats,
    PlayerRecord,
    RatingChange,
    RatingLine,
    Seat,
    Summary,
    summarize,
)

from .i18n import N_, _, n_
from .render import esc

#: Telegram's limit on a message's text.
LIMIT = 4096
#: The lengths a name is cut to, in turn, until the message fits.
NAME_CUTS = (64, 32, 20, 12, 8)

FEAT_NAMES = {
    FIRST_WIN: N_("🥇 First win: out first"),
    STREAK_5: N_("🔥 Five games in a row without being the durak"),
    HARD_AI: N_("🦾 Beat the hard bot"),
    SIX: N_("🛡 Beat off six cards"),
    CHAIN: N_("🔁 A chain of transfers the durak took"),
}
LEVEL_NAMES = {
    "easy": N_("🤖 Bot (easy)"),
    "normal": N_("🤖 Bot (normal)"),
    "hard": N_("🤖 Bot (hard)"),
}


def feat_name(feat: str) -> str:
    return _(FEAT_NAMES[feat]) if feat in FEAT_NAMES else feat


def _cut(name: str, size: int) -> str:
    return name if len(name) <= size else name[: size - 1] + "…"


def line_name(x: RatingLine, size: int = 64) -> str:
    if x.level:
        return _(LEVEL_NAMES[x.level]) if x.level in LEVEL_NAMES else "🤖 " + esc(x.level)
    return esc(_cut(x.name or str(x.user_id), size))


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else ("±0" if n == 0 else f"−{-n}")


# ---- /stats ------------------------------------------------------------------------


def _table_line(rank: int, x: RatingLine, size: int) -> str:
    games = n_("{n} game", "{n} games", x.games).format(n=x.games)
    duraks = n_("{n}× durak", "{n}× durak", x.duraks).format(n=x.duraks)
    parts = [f"{rank}. {line_name(x, size)} — <b>{x.rating}</b>", games, duraks]
    if x.streak:
        parts.append(f"🔥{x.streak}")
    if x.left_share is not None:
        parts.append(_("🚪 left {pct}%").format(pct=round(100 * x.left_share)))
    return " · ".join(parts)


#: Tied players named in one line of /stats at most; the rest are counted.
NAMED_TIES = 3


def _names(who: Sequence[RatingLine], size: int) -> str:
    names = ", ".join(line_name(x, size) for x in who[:NAMED_TIES])
    return names + (f" +{len(who) - NAMED_TIES}" if len(who) > NAMED_TIES else "")


def _fools_line(label: str, fools: Fools, size: int) -> str | None:
    if not fools.who:
        return None
    names = _names(fools.who, size)
    times = n_("{n} time", "{n} times", fools.times).format(n=fools.times)
    return f"{label}: {names} ({times})"


def _fit(build: Callable[[int, int], list[str]], rows: int) -> str:
    """The longest text ``build(name size, rows shown)`` makes within :data:`LIMIT`."""
    for size in NAME_CUTS:
        text = "\n".join(build(size, rows))
        if len(text) <= LIMIT:
            return text
    size = NAME_CUTS[-1]
    for shown in range(rows - 1, -1, -1):
        text = "\n".join(build(size, shown))
        if len(text) <= LIMIT:
            return text
    return "\n".join(build(size, 0))[:LIMIT]


def group_stats_text(stats: GroupStats, chat_title: str) -> str:
    """/stats in a group: the rating table, the fools, the longest run."""
    if not stats.lines:
        return _("No rated games in this chat yet.")

    def build(size: int, shown: int) -> list[str]:
        head = "🏆 <b>" + _("Ratings") + "</b> · " + esc(_cut(chat_title, size))
        lines = [head, ""]
        lines += [_table_line(k, x, size) for k, x in enumerate(stats.lines[:shown], 1)]
        rest = len(stats.lines) - shown
        if rest > 0:
            lines.append(n_("… and {n} more", "… and {n} more", rest).format(n=rest))
        extra = [
            _fools_line("🤡 " + _("Fool of the week"), stats.week, size),
            _fools_line("🃏 " + _("Fool of the month"), stats.month, size),
        ]
        if stats.longest.who:
            names = _names(stats.longest.who, size)
            n = stats.longest.times
            extra.append(
                "🔥 "
                + n_(
                    "Longest run without being the durak: {names}, {n} game",
                    "Longest run without being the durak: {names}, {n} games",
                    n,
                ).format(names=names, n=n)
            )
        found = [e for e in extra if e]
        return lines + (["", *found] if found else [])

    return _fit(build, len(stats.lines))


def player_text(record: PlayerRecord) -> str:
    """/stats @name: his rating, each other player's record against him, his feats."""
    x = record.line

    def build(size: int, shown: int) -> list[str]:
        detail = _table_line(1, x, size).split(" · ", 1)[1]
        lines = [f"👤 <b>{line_name(x, size)}</b> — {x.rating}", detail, ""]
        if record.meetings:
            lines.append("<b>" + _("Head to head") + "</b>")
        for m in record.meetings[:shown]:
            games = n_("{n} game together", "{n} games together", m.games).format(n=m.games)
            lines.append(
                _("vs {name}: {games}, durak {mine} : {theirs}").format(
                    name=line_name(m.other, size), games=games, mine=m.mine, theirs=m.theirs
                )
            )
        rest = len(record.meetings) - shown
        if rest > 0:
            lines.append(n_("… and {n} more", "… and {n} more", rest).format(n=rest))
        if record.feats:
            lines += ["", "<b>" + _("Achievements") + "</b>"]
            lines += [feat_name(f) for f in record.feats]
        return lines

    return _fit(build, len(record.meetings))


def no_record_text(name: str) -> str:
    return _("{name} has no rated game in this chat yet.").format(name=esc(_cut(name, 64)))


# ---- the end message's recap --------------------------------------------------------


def _seat_name(seats: Sequence[Seat], user_id: int, level: str, size: int = 24) -> str:
    for s in seats:
        if (level and s.is_ai and (s.level or "normal") == level) or (
            not level and not s.is_ai and s.user_id == user_id
        ):
            return ("🤖 " if s.is_ai else "") + esc(_cut(s.name, size))
    return esc(level or str(user_id))


def _named(seats: Sequence[Seat], ratings: GameRatings) -> tuple[Seat, ...]:
    """The seats a game's rating changes may name: its own, then (a knock-out) those
    of its players knocked out in its earlier deals."""
    return (*seats, *ratings.earlier)


def game_recap(seats: Sequence[Seat], game: Game, ratings: GameRatings | None) -> list[str]:
    """:func:`recap_lines` of a finished game (its play replayed for the summary)."""
    return recap_lines(seats, summarize(game), ratings)


def recap_lines(
    seats: Sequence[Seat], summary: Summary | None, ratings: GameRatings | None
) -> list[str]:
    """At most two short lines for the end message: the decisive moment and the cards
    taken; the rating changes and the achievements earned."""
    lines = []
    play = []
    if summary is not None and summary.decisive is not None:
        d = summary.decisive
        name = esc(_cut(seats[d.seat].name, 24)) if d.seat < len(seats) else "?"
        text = n_("{name} took {n} card", "{name} took {n} cards", d.cards).format(
            name=name, n=d.cards
        )
        if d.transfers:
            text += " " + _("after a transfer")
        play.append("⚡ " + text)
    if summary is not None and any(summary.taken):
        taken = ", ".join(
            f"{esc(_cut(s.name, 12))} {summary.taken[s.seat]}"
            for s in seats
            if s.seat < len(summary.taken)
        )
        play.append("📥 " + taken)
    if play:
        lines.append(" · ".join(play))
    if ratings is not None:
        named = _named(seats, ratings)
        seen = set()
        parts = []
        for c in ratings.changes:
            key = (c.user_id, c.level)
            if key in seen:
                continue
            seen.add(key)
            parts.append(f"{_seat_name(named, c.user_id, c.level)} {_signed(c.delta)}")
        feats = [f"{_seat_name(named, uid, '')}: {feat_name(f)}" for uid, f in ratings.feats]
        lines.append("📈 " + ", ".join(parts) + ("" if not feats else " · " + "; ".join(feats)))
    return lines


def feats_lines(seats: Sequence[Seat], ratings: GameRatings | None) -> list[str]:
    """The achievements a game earned, on one line ([] if none)."""
    if ratings is None or not ratings.feats:
        return []
    named = _named(seats, ratings)
    return [
        "🏅 " + "; ".join(f"{_seat_name(named, u, '')}: {feat_name(f)}" for u, f in ratings.feats)
    ]


# ---- /history and /leave --------------------------------------------------------------


def history_suffix(seats: Sequence[Seat], ratings: GameRatings | None) -> str:
    """A finished game's rating changes for its /history entry ('' if not rated)."""
    if ratings is None:
        return ""
    named = _named(seats, ratings)
    parts = [
        f"{_seat_name(named, c.user_id, c.level, 12)} {_signed(c.delta)}" for c in ratings.changes
    ]
    return "\n   📈 " + ", ".join(parts)


def leave_cost_text(line: RatingLine | None) -> str:
    """What /leave costs, said before he confirms."""
    if line is None:
        return _("Leaving counts against your reliability in this group's ratings.")
    return _(
        "Leaving counts against your reliability (now {n} of {games} games left) and your"
        " seat's result counts for your rating ({rating})."
    ).format(n=line.flaky, games=line.games, rating=line.rating)


def changes_by_seat(ratings: GameRatings) -> dict[tuple[int, str], RatingChange]:
    return {(c.user_id, c.level): c for c in ratings.changes}
