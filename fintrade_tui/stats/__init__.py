"""Statistics room: accuracy tables, paired tests with Holm correction, bootstrap intervals
and human-judge agreement, all on scipy/scikit-learn."""
