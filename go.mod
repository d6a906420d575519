module github.com/cnsd/cnsd

go 1.26
