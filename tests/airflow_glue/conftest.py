"""The glue tests import Airflow without a metadata DB: its home goes to a temp dir (unless set).

Airflow reads ``AIRFLOW_HOME`` once, on first import, and writes its config and logs folder there;
pointing it at a throw-away folder keeps the developer's ``~/airflow`` untouched.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile

if "airflow" not in sys.modules and "AIRFLOW_HOME" not in os.environ:
    _home = tempfile.mkdtemp(prefix="fairmon-airflow-glue-")
    os.environ["AIRFLOW_HOME"] = _home
    atexit.register(shutil.rmtree, _home, ignore_errors=True)
