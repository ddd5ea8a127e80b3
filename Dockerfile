# Image for `docker compose up` (web and worker). Not built in CI.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md manage.py ./
COPY workbench workbench
COPY coding coding
COPY ingest ingest
RUN pip install --no-cache-dir . \
 && DJANGO_SECRET_KEY=build-only-build-only-build-only-build-only-build-only DATABASE_URL=sqlite:////tmp/build.sqlite3 \
    DJANGO_STATIC_ROOT=/app/static python manage.py collectstatic --no-input
RUN useradd --create-home workbench
USER workbench
EXPOSE 8000
