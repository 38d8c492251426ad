"""What a user touches: plots (Bokeh), the notebook Explorer (ipywidgets), text tables and the
HTML report, and the command line. Reads records and declarations only, never kernels."""
