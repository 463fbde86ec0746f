// Everything of lg::nn: modules, layers, weight conversion, safetensors, and the model zoo.
#pragma once

#include <layoutguard/nn/activation.h>
#include <layoutguard/nn/basic.h>
#include <layoutguard/nn/conv.h>
#include <layoutguard/nn/module.h>
#include <layoutguard/nn/normalization.h>
#include <layoutguard/nn/pooling.h>
#include <layoutguard/nn/safetensors.h>
#include <layoutguard/nn/utils.h>
#include <layoutguard/models.h>
