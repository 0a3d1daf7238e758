"""The schema's history, each step written once for both databases.

:data:`STEPS` lists the changes to the schema, oldest first; each is a function
taking the transaction and the database's :class:`~durak.store.sql.Dialect`, and
branches on ``d.sqlite`` only where the databases truly differ. A database counts
its schema version (SQLite in ``PRAGMA user_version``, PostgreSQL in the table
``durak_schema``), and the numbers differ: PostgreSQL's version 1 came when SQLite
had two steps, so it holds those two, and from there on each step is one version
of each (SQLite's version = PostgreSQL's + 1). :func:`versions` turns the steps
into a database's own numbering, which deployed databases migrate by.

A new migration: write one more ``@step`` function at the end of this file. It
becomes SQLite's next version and PostgreSQL's next version; nothing else to
change, and never edit a step that has shipped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from .sql import APPLICATION_ID, Dialect, SqlTx

#: One change of the schema, for whichever database ``Dialect`` names.
Step = Callable[[SqlTx, Dialect], Awaitable[None]]
#: One version of one database's schema: its steps, its dialect bound.
Migration = Callable[[SqlTx], Awaitable[None]]

STEPS: list[Step] = []


def step(fn: Step) -> Step:
    """Register ``fn`` as the next step of the schema (the order of this file)."""
    STEPS.append(fn)
    return fn


async def _run(tx: SqlTx, statements: Sequence[str]) -> None:
    for statement in statements:
        await tx.execute(statement)


@step
async def first_schema(tx: SqlTx, d: Dialect) -> None:
    """The first schema: chats, users, games, seats, the action log, tallies, messages
    (SQLite's version 1; PostgreSQL's version 1 with :func:`turn_timers`)."""
    if d.sqlite:  # it tells our file from any other SQLite database
        await tx.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    big, num, real, text = d.bigint, d.integer, d.real, d.text
    await _run(
        tx,
        (
            f"""CREATE TABLE chats (
        chat_id     {big} PRIMARY KEY,
        title       {text},
        settings    {text} NOT NULL DEFAULT '{{}}',  -- JSON: changed rules, turn_timeout, language
        updated_at  {real} NOT NULL
    )""",
            f"""CREATE TABLE users (
        user_id     {big} PRIMARY KEY,
        name        {text} NOT NULL DEFAULT '',
        language    {text},
        updated_at  {real} NOT NULL
    )""",
            f"""CREATE TABLE games (
        game_id          {d.identity},
        chat_id          {big} NOT NULL REFERENCES chats (chat_id),
        status           {text} NOT NULL
                         CHECK (status IN ('lobby', 'running', 'finished', 'cancelled')),
        creator_id       {big} NOT NULL,
        rules            {text} NOT NULL,          -- JSON: every option of RULES.md
        previous_game_id {big} REFERENCES games (game_id),  -- the series continues
        seed             {text},                   -- the deal is reproducible from it
        start            {text},                   -- JSON: the record's start (deck order)
        version          {num} NOT NULL DEFAULT 0,  -- = number of logged actions
        snapshot         {text},                   -- JSON: to_snapshot() minus start, history
        end_reason       {text} CHECK (end_reason IN ('played', 'surrender', 'cancelled')),
        losers           {text},                   -- JSON list of seats
        draw             {d.boolean},
        ended_by         {big},                -- who surrendered or cancelled
        created_at       {real} NOT NULL,
        updated_at       {real} NOT NULL,
        started_at       {real},
        finished_at      {real}
    )""",
            # One open lobby or running game per chat, enforced by the database itself.
            """CREATE UNIQUE INDEX games_one_open_per_chat ON games (chat_id)
        WHERE status IN ('lobby', 'running')""",
            "CREATE INDEX games_by_status ON games (status)",
            "CREATE INDEX games_by_previous ON games (previous_game_id)",
            f"""CREATE TABLE seats (
        game_id  {big} NOT NULL REFERENCES games (game_id),
        seat     {num} NOT NULL CHECK (seat >= 0),
        user_id  {big} NOT NULL,
        name     {text} NOT NULL,
        kind     {text} NOT NULL DEFAULT 'human' CHECK (kind IN ('human', 'ai')),
        level    {text},
        PRIMARY KEY (game_id, seat),
        UNIQUE (game_id, user_id)
    ){d.without_rowid}""",
            "CREATE INDEX seats_by_user ON seats (user_id)",
            f"""CREATE TABLE actions (
        game_id     {big} NOT NULL REFERENCES games (game_id),
        version     {num} NOT NULL CHECK (version >= 1),
        seat        {num} NOT NULL,
        user_id     {big} NOT NULL,
        step        {text} NOT NULL,
        created_at  {real} NOT NULL,
        PRIMARY KEY (game_id, version)
    ){d.without_rowid}""",
        ),
    )
    # The log is append-only, and each entry carries the version its game moved to
    # (on PostgreSQL the action's own statement moves the game first).
    await _run(tx, _SQLITE_LOG_GUARDS if d.sqlite else _POSTGRES_LOG_GUARDS)
    await _run(
        tx,
        (
            f"""CREATE TABLE tallies (
        chat_id  {big} NOT NULL,
        user_id  {big} NOT NULL,
        played   {num} NOT NULL DEFAULT 0,
        losses   {num} NOT NULL DEFAULT 0,
        draws    {num} NOT NULL DEFAULT 0,
        PRIMARY KEY (chat_id, user_id)
    ){d.without_rowid}""",
            f"""CREATE TABLE messages (
        game_id     {big} NOT NULL REFERENCES games (game_id),
        kind        {text} NOT NULL,
        chat_id     {big} NOT NULL,
        message_id  {big} NOT NULL,
        PRIMARY KEY (game_id, kind, chat_id)
    ){d.without_rowid}""",
        ),
    )
    if not d.sqlite:  # SQLite's files never had it; a chat's move finds its messages
        await tx.execute("CREATE INDEX messages_by_chat ON messages (chat_id)")


_SQLITE_LOG_GUARDS = (
    """CREATE TRIGGER actions_no_update BEFORE UPDATE ON actions
        BEGIN SELECT RAISE(ABORT, 'the action log is append-only'); END""",
    """CREATE TRIGGER actions_no_delete BEFORE DELETE ON actions
        BEGIN SELECT RAISE(ABORT, 'the action log is append-only'); END""",
    """CREATE TRIGGER actions_follow_version BEFORE INSERT ON actions
        WHEN NEW.version IS NOT (SELECT version FROM games WHERE game_id = NEW.game_id)
        BEGIN SELECT RAISE(ABORT, 'an action must carry its game''s new version'); END""",
)
_POSTGRES_LOG_GUARDS = (
    """CREATE FUNCTION durak_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'the action log is append-only'; END $$""",
    """CREATE TRIGGER actions_no_change BEFORE UPDATE OR DELETE ON actions
        FOR EACH ROW EXECUTE FUNCTION durak_append_only()""",
    """CREATE TRIGGER actions_no_truncate BEFORE TRUNCATE ON actions
        FOR EACH STATEMENT EXECUTE FUNCTION durak_append_only()""",
    """CREATE FUNCTION durak_action_follows_version() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.version IS DISTINCT FROM
                    (SELECT version FROM games WHERE game_id = NEW.game_id) THEN
                RAISE EXCEPTION 'an action must carry its game''s new version';
            END IF;
            RETURN NEW;
        END $$""",
    """CREATE TRIGGER actions_follow_version BEFORE INSERT ON actions
        FOR EACH ROW EXECUTE FUNCTION durak_action_follows_version()""",
)


@step
async def turn_timers(tx: SqlTx, d: Dialect) -> None:
    """Turn timers and absent players: ``seats.timeouts``/``away``, ``timers``
    (SQLite's version 2; the rest of PostgreSQL's version 1).

    Stored chat settings are left as they are: SQLite's version 1 wrote every key
    on each change, so a stored ``"turn_timeout": null`` stays "no limit" (what the
    chat saw in its menu), and only chats that never saved settings get the default.
    """
    await _run(
        tx,
        (
            # Consecutive timed-out decisions of the seat's player, and whether that made
            # him away.
            f"ALTER TABLE seats ADD COLUMN timeouts {d.integer} NOT NULL DEFAULT 0"
            " CHECK (timeouts >= 0)",
            f"ALTER TABLE seats ADD COLUMN {d.flag('away')}",
            # A running game's turn deadline for one version; deleted when the game ends.
            f"""CREATE TABLE timers (
        game_id   {d.bigint} PRIMARY KEY REFERENCES games (game_id),
        version   {d.integer} NOT NULL,
        deadline  {d.real} NOT NULL       -- Unix time
    )""",
            # A chat's history (newest first) and moving a chat's games to its new id.
            "CREATE INDEX games_by_chat ON games (chat_id, finished_at)",
        ),
    )


@step
async def forum_topics(tx: SqlTx, d: Dialect) -> None:
    """Forum topics: ``games.thread_id``, and the open-game rule per (chat, topic)
    (SQLite's version 3, PostgreSQL's 2)."""
    await _run(
        tx,
        (
            # The forum topic (message_thread_id) a game was opened in; 0 for a chat
            # without topics or its General topic. Existing games keep 0: they were all
            # opened there.
            f"ALTER TABLE games ADD COLUMN thread_id {d.bigint} NOT NULL DEFAULT 0",
            # One open lobby or running game per topic, instead of per chat.
            "DROP INDEX games_one_open_per_chat",
            """CREATE UNIQUE INDEX games_one_open_per_topic ON games (chat_id, thread_id)
        WHERE status IN ('lobby', 'running')""",
        ),
    )


@step
async def lobbies(tx: SqlTx, d: Dialect) -> None:
    """Lobbies: ``seats.ready``/``has_left``, ``games.cap``, the ``notify`` table
    (SQLite's version 4, PostgreSQL's 3)."""
    await _run(
        tx,
        (
            # Play again is a lobby: who confirmed the next game; /leave hands a seat to
            # the AI.
            f"ALTER TABLE seats ADD COLUMN {d.flag('ready')}",
            f"ALTER TABLE seats ADD COLUMN {d.flag('has_left')}",
            # The lobby's cap of players chosen by its creator; NULL: the deck's maximum.
            f"ALTER TABLE games ADD COLUMN cap {d.integer} CHECK (cap >= 2)",
            # /notify_me: who wants a private message when a lobby opens in the chat.
            f"""CREATE TABLE notify (
        chat_id  {d.bigint} NOT NULL,
        user_id  {d.bigint} NOT NULL,
        since    {d.real} NOT NULL,
        PRIMARY KEY (chat_id, user_id)
    ){d.without_rowid}""",
            "CREATE INDEX notify_by_user ON notify (user_id)",
        ),
    )


@step
async def ratings(tx: SqlTx, d: Dialect) -> None:
    """Ratings: ``ratings``, ``rating_changes``, ``achievements``, and every finished
    game rated in the order the games ended (SQLite's version 5, PostgreSQL's 4)."""
    big, num, real, text = d.bigint, d.integer, d.real, d.text
    await _run(
        tx,
        (
            # A player's rating in a chat (OpenSkill's mu and sigma); an AI level's has
            # user_id 0 and the level, a human's the level ''.
            f"""CREATE TABLE ratings (
        chat_id  {big} NOT NULL,
        user_id  {big} NOT NULL,
        level    {text} NOT NULL DEFAULT '',
        mu       {real} NOT NULL,
        sigma    {real} NOT NULL,
        games    {num} NOT NULL DEFAULT 0,  -- rated games
        flaky    {num} NOT NULL DEFAULT 0,  -- of those: left, skipped, away
        streak   {num} NOT NULL DEFAULT 0,  -- games in a row up to now without being the durak
        best     {num} NOT NULL DEFAULT 0,  -- the longest such run
        PRIMARY KEY (chat_id, user_id, level)
    ){d.without_rowid}""",
            # Each rated game's result per player, with the public rating before and after.
            f"""CREATE TABLE rating_changes (
        game_id  {big} NOT NULL REFERENCES games (game_id),
        user_id  {big} NOT NULL,
        level    {text} NOT NULL DEFAULT '',
        chat_id  {big} NOT NULL,
        place    {num} NOT NULL,
        {d.flag("durak")},
        before   {num} NOT NULL,
        after    {num} NOT NULL,
        at       {real} NOT NULL,
        PRIMARY KEY (game_id, user_id, level)
    ){d.without_rowid}""",
            "CREATE INDEX rating_changes_by_chat ON rating_changes (chat_id, at)",
            f"""CREATE TABLE achievements (
        chat_id  {big} NOT NULL,
        user_id  {big} NOT NULL,
        feat     {text} NOT NULL,
        game_id  {big} NOT NULL REFERENCES games (game_id),
        at       {real} NOT NULL,
        PRIMARY KEY (chat_id, user_id, feat)
    ){d.without_rowid}""",
            "CREATE INDEX achievements_by_game ON achievements (game_id)",
        ),
    )
    from ..service.rated import rate_history  # the games' own code rates them

    await rate_history(tx)


@step
async def rules_as_played(tx: SqlTx, d: Dialect) -> None:
    """Every stored game names ``no_progress_draw`` as it was played, and the group's
    ratings are worked out again from the games (SQLite's version 6, PostgreSQL's 5).

    The option came without a step of its own, on by default, and the code that
    brought it read a game that does not name it as played with it: a game stored
    before, in which the takes went round 100 times, then failed to replay (left
    unrated, "damaged" in /history). RECORDS.md reads such a game as played without
    it; :func:`~durak.service.codec.rules_as_played` says which games those are, and
    each game's rules (and snapshot) now say it, so no later change of a default can
    change a stored game. The ratings, derived from the games alone, are rated again
    in the order the games ended, with the games read as they were played."""
    from ..service.codec import rules_as_played as as_played
    from ..service.rated import rate_history  # the games' own code rates them

    last = -1
    while True:
        rows = await tx.rows(
            "SELECT game_id, status, rules, snapshot FROM games WHERE game_id > $1"
            " ORDER BY game_id LIMIT 500",
            (last,),
        )
        if not rows:
            break
        for game_id, status, rules, snapshot in rows:
            last = int(game_id)
            found = as_played(str(status), str(rules), None if snapshot is None else str(snapshot))
            if found is not None:
                await tx.execute(
                    "UPDATE games SET rules = $1, snapshot = $2 WHERE game_id = $3",
                    (*found, last),
                )
    await _run(tx, [f"DELETE FROM {t}" for t in ("achievements", "rating_changes", "ratings")])
    await rate_history(tx)


@step
async def app_seats(tx: SqlTx, d: Dialect) -> None:
    """The Mini App: ``seats.app_only``, a seat that joined from the page and whose
    player the bot cannot write to (he never started it): nothing is sent to him in
    private, his place is the page (SQLite's version 7, PostgreSQL's 6)."""
    await _run(tx, (f"ALTER TABLE seats ADD COLUMN {d.flag('app_only')}",))


# ---- a database's own numbering -------------------------------------------------------


def versions(d: Dialect, steps: Sequence[Step] | None = None) -> tuple[Migration, ...]:
    """The database's migrations in its own numbering: ``versions(d)[k]`` takes a
    database of dialect ``d`` from schema version k to k + 1."""
    steps = list(STEPS if steps is None else steps)
    first = d.first_version_steps
    groups = [steps[:first], *([s] for s in steps[first:])]
    return tuple(_version(d, group) for group in groups if group)


def _version(d: Dialect, group: Sequence[Step]) -> Migration:
    async def migrate(tx: SqlTx) -> None:
        for one in group:
            await one(tx, d)

    names = " + ".join(s.__name__ for s in group)
    migrate.__name__ = migrate.__qualname__ = f"{d.name}: {names}"
    migrate.__doc__ = "\n\n".join(s.__doc__ or "" for s in group)
    return migrate
