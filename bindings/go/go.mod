module github.com/loopguard/loopguard/bindings/go

go 1.19
