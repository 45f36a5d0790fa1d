module stub

go 1.26.0
