"""The names of fairmon's environment variables, each defined once (the modules that read one import it).

Why one table: the spec decides routing and thresholds, the environment supplies secrets, endpoints
and deployment overrides; with every name here, a deployment's settings are greppable in one place
and two modules cannot drift apart on a spelling.

Examples
--------
>>> ENV_DATABASE_URL, ENV_SLACK_TOKEN
('FAIRMON_DATABASE_URL', 'FAIRMON_SLACK_TOKEN')
"""

from __future__ import annotations

from typing import Final

# ---- store --------------------------------------------------------------------------------------------
#: the store's SQLAlchemy URL (``--db`` wins; without both, the embedded PostgreSQL)
ENV_DATABASE_URL: Final = "FAIRMON_DATABASE_URL"
#: fairmon's home folder (embedded PostgreSQL data under ``$FAIRMON_HOME/pgdata``)
ENV_HOME: Final = "FAIRMON_HOME"
#: folder of the store's SQL migration files (default: the package's own)
ENV_SQL_DIR: Final = "FAIRMON_SQL_DIR"
#: longest wait of a store transaction for a lock, seconds (default 30; ``0`` = no limit)
ENV_DB_LOCK_TIMEOUT_S: Final = "FAIRMON_DB_LOCK_TIMEOUT_S"
#: longest single statement of the store, seconds (default 300; ``0`` = no limit)
ENV_DB_STATEMENT_TIMEOUT_S: Final = "FAIRMON_DB_STATEMENT_TIMEOUT_S"

# ---- Slack --------------------------------------------------------------------------------------------
#: the Slack bot token (a secret; the DAG passes its Slack connection's password instead)
ENV_SLACK_TOKEN: Final = "FAIRMON_SLACK_TOKEN"
#: the Slack Web API base URL (tests point it at a local fake)
ENV_SLACK_BASE_URL: Final = "FAIRMON_SLACK_BASE_URL"
#: the channel of a monitor whose spec names none (``alerts.slack_channel`` wins)
ENV_SLACK_CHANNEL: Final = "FAIRMON_SLACK_CHANNEL"
#: the channel of pipeline-failure messages (default: ``FAIRMON_SLACK_CHANNEL``)
ENV_PIPELINE_SLACK_CHANNEL: Final = "FAIRMON_PIPELINE_SLACK_CHANNEL"
#: longest Slack ``Retry-After`` slept inside one call, seconds (default 10; longer waits go back to the
#: outbox as a retry-at; ``0`` = never sleep)
ENV_SLACK_MAX_RETRY_WAIT_S: Final = "FAIRMON_SLACK_MAX_RETRY_WAIT_S"

# ---- execution ----------------------------------------------------------------------------------------
#: overrides ``execution.artifact_location`` (e.g. a shared volume or bucket in a deployment)
ENV_ARTIFACT_LOCATION: Final = "FAIRMON_ARTIFACT_LOCATION"
#: overrides ``execution.device`` (e.g. ``cuda`` on the GPU worker)
ENV_DEVICE: Final = "FAIRMON_DEVICE"
#: overrides ``execution.queue`` of the heavy tasks
ENV_HEAVY_QUEUE: Final = "FAIRMON_HEAVY_QUEUE"
#: overrides ``execution.pool``: the Airflow pool of the heavy tasks (unset: ``default_pool``)
ENV_HEAVY_POOL: Final = "FAIRMON_HEAVY_POOL"
#: where reports are written (a folder or fsspec URI served at ``FAIRMON_REPORT_BASE_URL``)
ENV_REPORT_LOCATION: Final = "FAIRMON_REPORT_LOCATION"
#: the URL the reports are served at; the links of the Slack alerts start with it (it wins over the
#: spec's ``alerts.report_base_url``, like ``FAIRMON_REPORT_LOCATION``: where reports live is the deployment's)
ENV_REPORT_BASE_URL: Final = "FAIRMON_REPORT_BASE_URL"
#: default of ``data.sql.url_env``: the variable holding the SQL source's URL outside Airflow
ENV_SOURCE_URL: Final = "FAIRMON_SOURCE_URL"
#: longest window query of a SQL data source, seconds (default 600; ``0`` = no limit; PostgreSQL sources)
ENV_SOURCE_STATEMENT_TIMEOUT_S: Final = "FAIRMON_SOURCE_STATEMENT_TIMEOUT_S"

# ---- datasets -----------------------------------------------------------------------------------------
#: folder of the public datasets (default ``../shared/datasets`` beside the repository)
ENV_DATA_DIR: Final = "FAIRMON_DATA_DIR"
#: download cache of the public datasets (default ``~/.cache/fairmon/datasets``)
ENV_CACHE_DIR: Final = "FAIRMON_CACHE_DIR"

# ---- Airflow DAG file ---------------------------------------------------------------------------------
#: folder of the monitor specs the DAG file loads (default the repository's ``monitors/``)
ENV_MONITORS_DIR: Final = "FAIRMON_MONITORS_DIR"
#: Airflow connection id of the store (default ``fairmon_db``)
ENV_DB_CONN_ID: Final = "FAIRMON_DB_CONN_ID"
#: Airflow connection id of Slack (default ``fairmon_slack``)
ENV_SLACK_CONN_ID: Final = "FAIRMON_SLACK_CONN_ID"
#: ``1``: a broken spec fails the whole DAG file instead of only its own DAG
ENV_STRICT_SPECS: Final = "FAIRMON_STRICT_SPECS"
#: ``0`` / ``off``: RUMIE never uses the compiled CPU kernel; ``1`` / ``on``: at any size (default: auto)
ENV_RUMIE_KERNEL: Final = "FAIRMON_RUMIE_KERNEL"
