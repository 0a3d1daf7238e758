# The bot with the compiled engine; the SQLite database lives on a volume.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1

RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY pyproject.toml setup.py README.md ./
COPY durak ./durak
COPY bot ./bot
RUN pip install setuptools wheel mypy \
    && DURAK_COMPILE=1 pip install --no-build-isolation . \
    && pip uninstall -y mypy \
    && apt-get purge -y gcc libc6-dev && apt-get autoremove -y

RUN useradd --create-home --uid 10001 durak && mkdir /data && chown durak /data
USER durak
WORKDIR /data
VOLUME ["/data"]

ENV DURAK_DB=/data/durak.sqlite3
# DURAK_BOT_TOKEN must be given at run time: docker run -e DURAK_BOT_TOKEN=... -v durak:/data IMAGE
CMD ["python", "-m", "bot"]
