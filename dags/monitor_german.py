"""Airflow DAG of one fairmon monitor: the spec named like this file (monitor_<name>.py -> <name>.yaml).

Written by ``python -m fairmon_airflow.dagfiles``; a spec that does not load is this file's import error.
"""

from fairmon_airflow.dagfiles import monitor_dag_file

globals().update(monitor_dag_file(__file__))
