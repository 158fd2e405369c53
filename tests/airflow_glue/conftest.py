"""The glue tests import Airflow without a metadata DB: its home goes to a temp dir (unless set).

Airflow reads ``AIRFLOW_HOME`` once, on first import, and writes its config and logs folder there;
pointing it at a throw-away folder keeps the developer's ``~/airflow`` untouched.
"""

from __future__ import annotations

import os
import sys
import tempfile

if "airflow" not in sys.modules:
    os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="fairmon-airflow-glue-"))
