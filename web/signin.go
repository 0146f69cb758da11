package web

import "github.com/gin-gonic/gin"

// signInRoutes registers sign-in, sign-out and the session middleware.
func (s *server) signInRoutes(e *gin.Engine) {}
