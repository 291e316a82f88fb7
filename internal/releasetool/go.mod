module github.com/podstatus/podstatus/internal/releasetool

go 1.26.0

require golang.org/x/mod v0.41.0
