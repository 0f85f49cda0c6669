"""The placer REST service (FastAPI): `placer serve`, or `uvicorn api.main:app`.

Thin on purpose: routers translate HTTP to calls of the `placer` library, and every solve
runs in a worker process with a deadline enforced from outside (api.pool).
"""
