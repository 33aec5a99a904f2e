module consumer

go 1.26.0
