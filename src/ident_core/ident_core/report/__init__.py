"""Identification reports: one self-contained HTML page of matplotlib figures and tables
(``robot-ident report``, ``--report DIR`` of identify, payload and friction;
``report.page.write_report``)."""
