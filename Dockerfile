# placer REST service. Build: docker build -t placer .   Run: docker run -p 8000:8000 placer
# Debian bookworm with apt's python3 (3.11); the CBC binary comes with the cbcbox wheel.

FROM debian:bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/placer
WORKDIR /src
COPY pyproject.toml README.md ./
COPY placer ./placer
COPY solvers ./solvers
COPY api ./api
COPY hardware_graphs ./hardware_graphs
# cbcbox's debug builds (~365 MB) run only with CBCBOX_BUILD=debug: left out of the image.
RUN /opt/placer/bin/pip install --no-cache-dir --disable-pip-version-check ".[service]" \
 && rm -rf /opt/placer/lib/python3*/site-packages/cbcbox/cbc_dist_debug* \
 && /opt/placer/bin/python -c "import cbcbox, os; p = str(cbcbox.cbc_bin_path()); assert os.access(p, os.X_OK), p" \
 && /opt/placer/bin/python -m compileall -q /opt/placer/lib

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 tini libstdc++6 zlib1g \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --home-dir /var/lib/placer --create-home placer
COPY --from=build /opt/placer /opt/placer
# PLACER_ALLOWED_HOSTS=*: a container is reached under names it cannot know (set a list to restrict it)
ENV PATH=/opt/placer/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PLACER_HOST=0.0.0.0 \
    PLACER_ALLOWED_HOSTS=* \
    PLACER_PORT=8000 \
    PLACER_WORKERS=2 \
    PLACER_DB_PATH=/var/lib/placer/jobs.sqlite3
USER placer
WORKDIR /var/lib/placer
VOLUME ["/var/lib/placer"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["python", "-m", "api.healthcheck"]
# tini is PID 1: it forwards SIGTERM to the service (which then marks running jobs interrupted) and reaps.
ENTRYPOINT ["tini", "--", "placer", "serve"]
